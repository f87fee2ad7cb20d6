# Encode benchmark: RustyJson vs jiffy vs :erlang.term_to_binary (the floor: a native serializer with no
# escaping or number formatting), interleaved in one run. Run: mix run bench/encode.exs
# Options: RUSTYJSON_BENCH_ROUNDS (default 15), RUSTYJSON_BENCH_ONLY=name,name (substring match).
Code.require_file("../test/support/apt_libs.exs", __DIR__)
Code.require_file("harness.exs", __DIR__)
Code.require_file("inputs.exs", __DIR__)
RustyJson.AptLibs.add_paths!([:jiffy])

alias RustyJson.Bench.{Harness, Inputs}

rounds = String.to_integer(System.get_env("RUSTYJSON_BENCH_ROUNDS", "15"))
only = System.get_env("RUSTYJSON_BENCH_ONLY")

inputs =
  (Inputs.shared() ++ Inputs.generated(report_mb: 2) ++ Inputs.micro())
  |> Enum.filter(fn {name, _, _} ->
    only == nil or Enum.any?(String.split(only, ","), &String.contains?(name, &1))
  end)

for {name, _json, term} <- inputs do
  # Same output as jiffy's (up to key order and float spelling): check the content once.
  ours = RustyJson.encode!(term)

  unless :jiffy.decode(ours, [:return_maps, :use_nil]) == term do
    raise "RustyJson's output for #{name} does not decode back to the input"
  end
end

header =
  String.pad_trailing("document", 20) <>
    Enum.map_join(
      ["size", "RustyJson", "jiffy", "t2b", "RJ/jiffy", "RJ/t2b"],
      &String.pad_leading(&1, 11)
    )

IO.puts(header)

rows =
  for {name, _json, term} <- inputs do
    r =
      Harness.compare(
        [
          rusty_json: fn -> RustyJson.encode!(term) end,
          jiffy: fn -> :jiffy.encode(term, [:use_nil]) end,
          term_to_binary: fn -> :erlang.term_to_binary(term) end
        ],
        rounds: rounds,
        batch_ms: 10
      )

    rj = r.rusty_json.median_us
    ratio = fn x -> :erlang.float_to_binary(rj / x, decimals: 2) end

    cells = [
      Harness.fmt_bytes(byte_size(RustyJson.encode!(term))),
      Harness.fmt_us(rj),
      Harness.fmt_us(r.jiffy.median_us),
      Harness.fmt_us(r.term_to_binary.median_us),
      ratio.(r.jiffy.median_us),
      ratio.(r.term_to_binary.median_us)
    ]

    IO.puts(String.pad_trailing(name, 20) <> Enum.map_join(cells, &String.pad_leading(&1, 11)))
    {name, cells}
  end

IO.puts("\nMarkdown:\n")

IO.puts(
  "| document | output | RustyJson | jiffy | term_to_binary | RustyJson / jiffy | RustyJson / t2b |"
)

IO.puts("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")

for {name, cells} <- rows do
  IO.puts("| #{name} | " <> Enum.join(cells, " | ") <> " |")
end

# The scheduling threshold: an encode runs on the calling scheduler until it has done 20,000 work units (one per
# value, three per float, one per 32 bytes of long strings), then continues on a dirty CPU scheduler from where
# it stopped. Lists just under and just over the budget show the time the budget stands for and the hop's cost.
IO.puts("\nScheduler threshold (budget = 20,000 units):\n")

IO.puts(
  "| input | elements at the budget | just under (normal scheduler) | just over (continues dirty) | hop cost |"
)

IO.puts("| --- | ---: | ---: | ---: | ---: |")

for {label, make, units} <- [
      {"integers", fn n -> Enum.to_list(1..n) end, 1},
      {"short strings", fn n -> Enum.map(1..n, &"hello world #{&1}") end, 1},
      {"floats", fn n -> Enum.map(1..n, &(&1 / 7)) end, 3}
    ] do
  at = div(20_000, units)
  {n_under, n_over} = {at - 10, at + 10}
  under = make.(n_under)
  over = make.(n_over)

  r =
    Harness.compare(
      [under: fn -> RustyJson.encode!(under) end, over: fn -> RustyJson.encode!(over) end],
      rounds: rounds,
      batch_ms: 10
    )

  # 20 more elements are 0.1-0.3% more work; the rest of the difference is the hop.
  hop = r.over.median_us - r.under.median_us * n_over / n_under

  IO.puts(
    "| #{label} | #{at} | #{Harness.fmt_us(r.under.median_us)} | #{Harness.fmt_us(r.over.median_us)} | " <>
      "#{Harness.fmt_us(hop)} |"
  )
end
