# Float-heavy documents only: RustyJson.encode!/decode! of canada, mesh, geo_floats (generated) and the float
# vectors (../shared/compat/floats.etf as one list), each call timed alone, minimum and median per document.
# Run: mix run bench/floats.exs. Options: RUSTYJSON_BENCH_ROUNDS (default 25).
# To compare two builds of the NIF, run it alternately against each (bench/notes/10-encode.md, 2026-11-25).
Code.require_file("inputs.exs", __DIR__)

alias RustyJson.Bench.Inputs

rounds = String.to_integer(System.get_env("RUSTYJSON_BENCH_ROUNDS", "25"))

shared =
  for name <- ~w(canada mesh),
      path = Path.join(Inputs.shared_dir(), name <> ".json"),
      File.exists?(path),
      do: {name, File.read!(path)}

# Coordinates as an API writes them: 17-digit quotients, the common worst case for the shortest digits.
geo = RustyJson.encode!(for i <- 1..50_000, do: [i / 7, -i / 9])

vectors =
  case File.read(Path.expand("../../compat/floats.etf", Inputs.shared_dir())) do
    {:ok, etf} ->
      [{"float_vectors", RustyJson.encode!(Enum.map(:erlang.binary_to_term(etf), &elem(&1, 0)))}]

    _ ->
      []
  end

# Microseconds for one call, the collector run first so that earlier garbage does not land in it.
time = fn fun ->
  :erlang.garbage_collect()
  {us, _} = :timer.tc(fun)
  us
end

stats = fn times ->
  sorted = Enum.sort(times)
  {hd(sorted), Enum.at(sorted, div(length(sorted), 2))}
end

IO.puts("document        op       min µs  median µs  (#{rounds} calls each, interleaved)")

for {name, json} <- shared ++ [{"geo_floats", geo}] ++ vectors do
  term = RustyJson.decode!(json)

  {enc, dec} =
    Enum.reduce(1..rounds, {[], []}, fn _, {enc, dec} ->
      {[time.(fn -> RustyJson.encode!(term) end) | enc],
       [time.(fn -> RustyJson.decode!(json) end) | dec]}
    end)

  for {op, times} <- [encode: enc, decode: dec] do
    {min, median} = stats.(times)

    IO.puts(
      String.pad_trailing(name, 16) <>
        String.pad_trailing(Atom.to_string(op), 7) <>
        String.pad_leading(Integer.to_string(min), 8) <>
        String.pad_leading(Integer.to_string(median), 11)
    )
  end
end
