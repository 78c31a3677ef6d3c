#!/bin/sh
# Test certificates in directory $1, made fresh by each test run that needs them:
#   ca.pem                         CA the broker and the clients trust
#   server.pem / server.key        broker certificate for localhost and 127.0.0.1
#   server-keystore.pem            key + certificate in one file (ssl.keystore.location)
#   server-encrypted-keystore.pem  the same with the key encrypted by password "keypass"
#   alice.pem / alice.key          client certificate, subject CN=alice,OU=eng,O=Acme
#   bob.pem / bob.key              client certificate, subject CN=bob,OU=ops,O=Acme
#   rogue-ca.pem, mallory.pem / mallory.key  a client certificate from a CA nobody trusts
#   server.p12                     PKCS12 keystore (key, certificate, CA), password "storepass"
#   truststore.p12                 PKCS12 truststore holding ca.pem, password "trustpass"
set -eu
dir=$1
mkdir -p "$dir"
cd "$dir"
key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:prime256v1 -out "$1" 2>/dev/null; }
ca() {  # name subject
  key "$1.key"
  openssl req -x509 -new -key "$1.key" -out "$1.pem" -days 2 -subj "$2" 2>/dev/null
}
signed() {  # name subject ca extensions
  key "$1.key"
  openssl req -new -key "$1.key" -out "$1.csr" -subj "$2" 2>/dev/null
  printf '%s\n' "$4" > "$1.ext"
  openssl x509 -req -in "$1.csr" -CA "$3.pem" -CAkey "$3.key" -CAcreateserial -out "$1.pem" -days 2 \
    -extfile "$1.ext" 2>/dev/null
}
ca ca "/CN=Oxbow Test CA"
ca rogue-ca "/CN=Rogue CA"
signed server "/CN=localhost" ca "subjectAltName=DNS:localhost,IP:127.0.0.1"
signed alice "/O=Acme/OU=eng/CN=alice" ca "extendedKeyUsage=clientAuth"
signed bob "/O=Acme/OU=ops/CN=bob" ca "extendedKeyUsage=clientAuth"
signed mallory "/O=Acme/OU=eng/CN=mallory" rogue-ca "extendedKeyUsage=clientAuth"
cat server.key server.pem > server-keystore.pem
openssl pkey -in server.key -aes256 -passout pass:keypass -out server-encrypted.key
cat server-encrypted.key server.pem > server-encrypted-keystore.pem
openssl pkcs12 -export -in server.pem -inkey server.key -certfile ca.pem -out server.p12 -passout pass:storepass
openssl pkcs12 -export -nokeys -in ca.pem -out truststore.p12 -passout pass:trustpass
