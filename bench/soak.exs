# Memory soak (make soak): 100,000 encode and decode calls of mixed documents in 4 processes at once, after a
# warm-up; prints the BEAM's memory (:erlang.memory/0 total and binary), the OS process's RSS and the bytes the
# NIF's allocator holds, after the warm-up and at checkpoints, every process garbage collected before each sample.
# No leak: the figures settle after the warm-up.
#
#   mix run bench/soak.exs                     # options: --calls N (default 100000), --warmup N (default 10000),
#                                              # --procs N (default 4), --checkpoints N (default 4)
# Documents: the public ones from ../shared/data/bench/ (or $RUSTYJSON_BENCH_DATA) when present, and generated ones.
Code.require_file("../test/support/soak.ex", __DIR__)

{opts, _} =
  OptionParser.parse!(System.argv(),
    strict: [calls: :integer, warmup: :integer, procs: :integer, checkpoints: :integer]
  )

shared = System.get_env("RUSTYJSON_BENCH_DATA") || Path.expand("../../shared/data/bench", __DIR__)

calls = opts[:calls] || 100_000
procs = opts[:procs] || 4
started = System.monotonic_time(:millisecond)

result =
  RustyJson.Soak.run(
    calls: calls,
    warmup: opts[:warmup] || 10_000,
    procs: procs,
    checkpoints: opts[:checkpoints] || 4,
    shared: if(File.dir?(shared), do: shared),
    log: &IO.puts/1
  )

secs = div(System.monotonic_time(:millisecond) - started, 1000)
warm = result.warmup
last = List.last(result.checkpoints)
diff = fn key -> RustyJson.Soak.mb(Map.fetch!(last, key) - Map.fetch!(warm, key)) end

IO.puts("""

#{calls} calls after a warm-up of #{warm.calls}, #{procs} processes, #{result.cases} cases, #{secs} s.
Change from the warm-up to the end: BEAM total #{diff.(:total)}, binary #{diff.(:binary)}, RSS #{diff.(:rss)}, \
NIF allocator #{last.native - warm.native} bytes.

| point | calls | BEAM total | BEAM binary | RSS | NIF allocator |
| --- | ---: | ---: | ---: | ---: | ---: |
#{Enum.map_join([{"start", result.start}, {"after warm-up", warm}] ++ Enum.with_index(result.checkpoints, fn s, i -> {"checkpoint #{i + 1}", s} end), "\n", fn {label, s} -> "| #{label} | #{s.calls} | #{RustyJson.Soak.mb(s.total)} | #{RustyJson.Soak.mb(s.binary)} | #{RustyJson.Soak.mb(s.rss)} | #{RustyJson.Soak.kb(s.native)} |" end)}
""")
