# Every target does its own set-up on a fresh machine: packages, configure, build.
BUILD ?= build
JOBS ?= $(shell nproc)
PY ?= /usr/bin/python3

.PHONY: all deps configure build run test unit-test integration-test format-check layer-check bench soak fuzz clean

all: build

deps:
	@bash scripts/install-deps.sh

$(BUILD)/build.ninja: | deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo

configure: deps $(BUILD)/build.ninja

build: configure
	cmake --build $(BUILD) -j $(JOBS)

run: build
	@mkdir -p data
	@echo "Starting Oxbow: Kafka on localhost:9092 (data in ./data), the schema registry on http://localhost:8081, the SQL server on http://localhost:8088"
	$(BUILD)/oxbow platform --config config/server.properties

unit-test: build
	ctest --test-dir $(BUILD) --output-on-failure -j 2

# pytest in TEST_WORKERS processes (default three per core, at most 12: the tests mostly wait) with
# the node tests beside them; the slowest tests are listed at the end (scripts/integration-tests.sh).
integration-test: build
	TEST_WORKERS=$(TEST_WORKERS) bash scripts/integration-tests.sh $(abspath $(BUILD))/oxbow $(PY)

# The C++ sources as .clang-format lays them out (`clang-format -i` on the files it names).
format-check:
	git ls-files '*.cpp' '*.h' | xargs clang-format --dry-run --Werror

# Every #include in src/ against the dependency table of src/README.md.
layer-check:
	$(PY) tools/check_layers.py

test: format-check layer-check unit-test integration-test

bench: build
	bash bench/broker.sh

# Not part of `make test`: SOAK_ROUNDS rounds of the compaction model check against a real broker
# (writes, tombstones and reads while the cleaner runs; tests/soak/compaction_soak.py --help).
SOAK_ROUNDS ?= 20
soak: build
	OXBOW_BIN=$(abspath $(BUILD))/oxbow $(PY) tests/soak/compaction_soak.py --rounds $(SOAK_ROUNDS)

# Builds the fuzzers, then runs each for FUZZ_SECONDS; corpora and anything a fuzzer finds (crash-*,
# slow-unit-*, ...) stay under build-fuzz/, never in the work tree.
FUZZERS = protocol/fuzz_request_decoder broker/fuzz_scram broker/fuzz_oauth_bearer \
          group/fuzz_group_records txn/fuzz_txn_records registry/fuzz_avro_schema \
          registry/fuzz_avro_binary registry/json/fuzz_json_schema registry/protobuf/fuzz_protobuf_schema \
          sql/fuzz_sql_parser sql/fuzz_row_serde connect/fuzz_json_converter \
          connect/fuzz_plugin_codec connect/fuzz_connect_protocol connect/fuzz_connect_records
FUZZ_SECONDS ?= 60

fuzz: deps
	cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DOXBOW_FUZZ=ON -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address"
	cmake --build build-fuzz --target $(notdir $(FUZZERS))
	@for f in $(FUZZERS); do \
	  name=$$(basename $$f); mkdir -p build-fuzz/corpus/$$name build-fuzz/artifacts/$$name; \
	  echo "== $$name for $(FUZZ_SECONDS) s"; \
	  build-fuzz/src/$$f -max_total_time=$(FUZZ_SECONDS) -artifact_prefix=build-fuzz/artifacts/$$name/ \
	    build-fuzz/corpus/$$name || exit 1; \
	done

clean:
	rm -rf $(BUILD) build-fuzz
