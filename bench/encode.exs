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

# Each input is built (read and decoded, or generated) just before it is measured and dropped after, so the
# process heap holds one document at a time: garbage collections then cost what they cost with that document only.
shared =
  for name <- ~w(canada citm_catalog twitter github_events mesh update-center twitterescaped),
      path = Path.join(Inputs.shared_dir(), name <> ".json"),
      File.exists?(path),
      do: {name, fn -> Inputs.from_json(name, File.read!(path)) end}

generated =
  for {name, make} <- [
        {"api_list_1000", fn -> Inputs.api_list(1000) end},
        {"report_2mb", fn -> Inputs.report(2) end},
        {"nested_100", fn -> Inputs.nested(100) end},
        {"object_5000_keys", fn -> Map.new(1..5000, &{"key_#{&1}", &1}) end}
      ],
      do: {name, fn -> Inputs.from_term(name, make.()) end}

micro = for {name, _, _} = input <- Inputs.micro(), do: {name, fn -> input end}

inputs =
  Enum.filter(shared ++ generated ++ micro, fn {name, _} ->
    only == nil or Enum.any?(String.split(only, ","), &String.contains?(name, &1))
  end)

header =
  String.pad_trailing("document", 20) <>
    Enum.map_join(
      ["size", "RustyJson", "jiffy", "t2b", "RJ/jiffy", "RJ/t2b"],
      &String.pad_leading(&1, 11)
    )

IO.puts(header)

rows =
  for {name, load} <- inputs do
    {^name, _json, term} = load.()

    # Same content as the input (up to key order and float spelling): check once.
    unless :jiffy.decode(RustyJson.encode!(term), [:return_maps, :use_nil]) == term do
      raise "RustyJson's output for #{name} does not decode back to the input"
    end

    :erlang.garbage_collect()

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
# value, two per string, three per float, one more per 32 bytes of a string), then continues on a dirty CPU
# scheduler from where it stopped. Lists just under and just over the budget show the time the budget stands for and the hop's cost.
IO.puts("\nScheduler threshold (budget = 20,000 units):\n")

IO.puts(
  "| input | elements at the budget | just under (normal scheduler) | just over (continues dirty) | hop cost |"
)

IO.puts("| --- | ---: | ---: | ---: | ---: |")

for {label, make, units} <- [
      {"integers", fn n -> Enum.to_list(1..n) end, 1},
      {"short strings", fn n -> Enum.map(1..n, &"hello world #{&1}") end, 2},
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
