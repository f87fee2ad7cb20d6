# The installed NIF's speed on the shared benchmark documents, for comparing two builds of it (the local build
# and a precompiled artifact, bench/notes/85-precompiled.md): install one as priv/native/rustyjson_nif.so, run
# `taskset -c 1 mix run --no-compile bench/library_speed.exs`, install the other, run again, alternating.
# Prints the 6th fastest of 40 calls of decode!/1 and encode!/1 per document, in µs.
dir = System.get_env("RUSTYJSON_BENCH_DATA", Path.expand("../../shared/data/bench", __DIR__))

for doc <- ~w(twitter.json citm_catalog.json canada.json github_events.json) do
  json = File.read!(Path.join(dir, doc))
  term = RustyJson.decode!(json)
  time = fn f -> for(_ <- 1..40, do: elem(:timer.tc(f), 0)) |> Enum.sort() |> Enum.at(5) end
  for _ <- 1..5, do: RustyJson.decode!(json)
  decode = time.(fn -> RustyJson.decode!(json) end)
  encode = time.(fn -> RustyJson.encode!(term) end)
  IO.puts("#{doc}: decode #{decode} µs, encode #{encode} µs")
end
