"""simdjson's own validating parse (stage 1 and 2, into its tape) of the documents bench/pointer.exs builds: the
reference for how fast validating a document can be on this machine, outside the BEAM.

    pip install pysimdjson            # simdjson bundled, its best kernel chosen at run time
    mkdir -p /tmp/docs && DUMP_DIR=/tmp/docs ROUNDS=1 mix run bench/pointer.exs
    taskset -c 1 python3 bench/pointer_simdjson.py /tmp/docs/*.json
"""
import sys
import time

import simdjson


def best_ms(parser, data, rounds=20):
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        doc = parser.parse(data)
        best = min(best, time.perf_counter() - start)
        del doc
    return best * 1e3


def main(paths):
    parser = simdjson.Parser()
    print("| document | size | simdjson parse (min of 20) | GB/s |\n| --- | ---: | ---: | ---: |")
    for path in paths:
        with open(path, "rb") as f:
            data = f.read()
        ms = best_ms(parser, data)
        print(f"| {path.rsplit('/', 1)[-1]} | {len(data) / 1e6:.1f} MB | {ms:.2f} ms | {len(data) / ms / 1e6:.2f} |")


if __name__ == "__main__":
    main(sys.argv[1:])
