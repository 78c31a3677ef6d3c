# Helpers the bench scripts share (sourced, not run).

# A TCP port nothing listens on right now.
free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# Waits up to 10 s for a listener on 127.0.0.1:PORT.
wait_for_port() {
  for _ in $(seq 200); do (exec 3<>/dev/tcp/127.0.0.1/"$1") 2>/dev/null && return 0; sleep 0.05; done
  echo "nothing listens on port $1" >&2
  return 1
}

# Field NAME of the JSON object on stdin (`oxbow perf ... --json`).
field() { /usr/bin/python3 -c "import json,sys; print(json.loads(sys.stdin.read())['$1'])"; }

# The median of the numbers given.
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
