# The two commands a new user needs: `make demo` (the main job) and `make test` (every check CI runs).
SHELL := /bin/bash
export PATH := $(HOME)/.cargo/bin:$(PATH)
# Elixir needs a UTF-8 locale to handle non-ASCII file names and output.
export LC_ALL := C.UTF-8
export LANG := C.UTF-8

.PHONY: demo test test-matrix test-arm64 test-armhf test-riscv64 test-foreign precompile verify-artifacts deps build dialyzer bench bench-matrix bench-quick bench-streams bench-streams-matrix bench-pointer fuzz soak latency worst-case clean

deps:
	@scripts/install-deps

build: deps
	mix compile

# Encodes and decodes real and generated documents, printing size and RustyJson vs jiffy times.
demo: deps
	mix run bench/demo.exs

test: deps
	mix format --check-formatted
	mix compile --warnings-as-errors
	# The macOS and Windows NIFs, cross-built as `make precompile` builds them, for the tests that inspect them
	# (test/mix/cross_artifacts_test.exs): no VM here can load them.
	scripts/precompile native/target/precompiled-desktop aarch64-apple-darwin x86_64-apple-darwin x86_64-pc-windows-gnu
	# The archives do not depend on the folder they are built in (one target, built from two copies of the tree).
	scripts/check-reproducible
	RUSTYJSON_CROSS_ARTIFACTS=native/target/precompiled-desktop mix test
	# Again with every fast path switched off (term layouts left to erl_nif): the fallbacks must give the same.
	RUSTYJSON_CROSS_ARTIFACTS=native/target/precompiled-desktop RUSTYJSON_FAST_PATHS=off mix test
	cd native && cargo fmt --all --check
	cd native && cargo clippy --workspace --all-targets --release -- -D warnings
	cd native && cargo test --workspace --release
	# The core again with overflow checks (the release profile wraps silently).
	cd native && cargo test -p rustyjson_core
	# The portable scans other architectures run (aarch64: make test-arm64), here in place of SSE2.
	cd native && cargo test -p rustyjson_core --release --features portable
	# The declared lowest Rust (rust-version in native/Cargo.toml) still builds everything.
	scripts/check-rust-version
	scripts/dialyzer

# The version matrix: compile with warnings as errors and run the tests on OTP 27 / Elixir 1.18 (Debian trixie)
# and OTP 29 / Elixir 1.20 (Debian sid), in Debian roots built once with debootstrap from the host's apt mirror
# and cached in ~/.cache/rusty_json/roots (needs root). One suite: make test-matrix SUITES=sid
SUITES ?= trixie sid
test-matrix: deps
	scripts/test-matrix $(SUITES)

# Release artifacts: the NIF cross-built for each precompiled target, archived, and the checksum file that goes
# next to mix.exs in the package (native/target/precompiled/; scripts/precompile).
precompile: deps
	scripts/precompile

# Rebuilds every archive and compares each with a published checksum file: make verify-artifacts CHECKSUMS=FILE
verify-artifacts: deps
	@[ -n "$(CHECKSUMS)" ] || { echo "usage: make verify-artifacts CHECKSUMS=path/to/checksum-Elixir.RustyJson.Native.exs" >&2; exit 2; }
	scripts/verify-artifacts "$(CHECKSUMS)"

# Other architectures: the artifact cross-built, the core's tests under qemu, and a trixie root of that
# architecture (no Rust) that installs the artifact and runs a subset of the suite under emulation (needs root;
# scripts/test-foreign). arm64: aarch64; armhf: armv7, a 32-bit VM; riscv64. test-foreign runs all three.
test-arm64: deps
	scripts/test-foreign arm64

test-armhf: deps
	scripts/test-foreign armhf

test-riscv64: deps
	scripts/test-foreign riscv64

test-foreign: test-arm64 test-armhf test-riscv64

# Dialyzer from apt's erlang-dialyzer; the PLT is built once (a few minutes) and cached in ~/.cache/rusty_json.
dialyzer: deps
	scripts/dialyzer

# The benchmarks run one call at a time on a VM pinned to one core (BENCH_CPU): left to float over the cores, the
# VM's threads (normal, dirty, collector) land differently from batch to batch and whole batches run fast or slow
# (bench/notes/80-reproducibility.md). Without taskset, or on one core, they run unpinned.
BENCH_CPU ?= 1
BENCH_PIN := $(shell command -v taskset >/dev/null && [ $$(nproc) -gt $(BENCH_CPU) ] && echo taskset -c $(BENCH_CPU))

# The full benchmark suite; writes BENCHMARKS.md and bench/charts/ (under 15 minutes on 2 cores), after the same
# suite on the version matrix's VMs (bench-matrix, about 10 minutes each: bench/vms/*.md, included in the report).
bench: deps bench-matrix
	$(BENCH_PIN) mix run bench/report.exs

bench-matrix: deps
	scripts/bench-matrix $(SUITES)

# A quick pass for development: smaller inputs, one timing run, written to /tmp.
bench-quick: deps
	$(BENCH_PIN) mix run bench/report.exs --quick --out /tmp/BENCHMARKS.quick.md

# Streams: RustyJson.Stream against whole-document calls on 100,000 records, and RSS while ~1 GB streams through
# (bench/notes/95-streams.md; about 6 minutes at these defaults).
bench-streams: deps
	$(BENCH_PIN) mix run bench/streams.exs

# The same on the version matrix's VMs (OTP 27+ has `:json.decode_start/3` to compare with), about 8 minutes each.
bench-streams-matrix: deps
	for suite in $(SUITES); do scripts/in-root $$suite 'export LC_ALL=C.UTF-8; $(BENCH_PIN) mix run bench/streams.exs' || exit 1; done

# JSON Pointers: get/3 of one field against decode!/1, and decode_array(at:) against a top-level array, on ~10 MB
# documents (bench/notes/96-pointer.md; about 4 minutes).
bench-pointer: deps
	$(BENCH_PIN) mix run bench/pointer.exs

# Coverage-guided fuzzing of the Rust core (nightly + cargo-fuzz, installed if missing): make fuzz FUZZ_SECONDS=300
FUZZ_SECONDS ?= 60
fuzz: deps
	scripts/fuzz $(FUZZ_SECONDS)

# Memory soak: 100,000 encode/decode calls in 4 processes; prints BEAM memory, RSS and NIF allocator figures.
soak: deps
	mix run bench/soak.exs

# Scheduler latency: how late 1 ms sleeps wake while a 10 MB document is encoded and decoded (RustyJson, jiffy),
# with the VM's default flags and with the normal schedulers' busy wait off (+sbwt none).
latency: deps
	mix run bench/latency.exs
	ELIXIR_ERL_OPTIONS="+sbwt none" mix run bench/latency.exs
	mix run bench/holds.exs

# Time and size of each hostile input class at two sizes 10x apart (a Markdown table).
worst-case: deps
	mix run bench/worst_case.exs

clean:
	rm -rf _build priv/native native/target
