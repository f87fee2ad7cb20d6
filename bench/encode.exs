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

    ratio = fn peer ->
      :erlang.float_to_binary(Harness.ratio(r, :rusty_json, peer), decimals: 2)
    end

    cells = [
      Harness.fmt_bytes(byte_size(RustyJson.encode!(term))),
      Harness.fmt_us(rj),
      Harness.fmt_us(r.jiffy.median_us),
      Harness.fmt_us(r.term_to_binary.median_us),
      ratio.(:jiffy),
      ratio.(:term_to_binary)
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

# The scheduling threshold: an encode runs on the calling scheduler for at most 0.8 ms (the clock is read every
# 512 work units), then continues on a dirty CPU scheduler from where it stopped. For each element type, a list
# taking 0.25-0.5 ms (stays on the normal scheduler) and one 4 times as long (continues dirty): the time per
# element of each shows what continuing dirty costs (the hop, plus a larger working set).
IO.puts("\nScheduler threshold (0.8 ms on the calling scheduler):\n")

IO.puts(
  "| elements | short list (normal scheduler) | 4x longer list (continues dirty) | per element, short / long |"
)

IO.puts("| --- | ---: | ---: | ---: |")

time = fn list ->
  Harness.compare([x: fn -> RustyJson.encode!(list) end], rounds: 5, batch_ms: 10).x.median_us
end

for {label, make} <- [
      {"integers", fn n -> Enum.to_list(1..n) end},
      {"short strings", fn n -> Enum.map(1..n, &"hello world #{&1}") end},
      {"floats", fn n -> Enum.map(1..n, &(&1 / 7)) end}
    ] do
  n =
    Enum.reduce_while(Stream.iterate(1000, &round(&1 * 1.25)), nil, fn n, _ ->
      if time.(make.(n)) >= 250, do: {:halt, n}, else: {:cont, n}
    end)

  short = make.(n)
  long = make.(4 * n)

  r =
    Harness.compare(
      [short: fn -> RustyJson.encode!(short) end, long: fn -> RustyJson.encode!(long) end],
      rounds: rounds,
      batch_ms: 10
    )

  per = fn us, count -> :erlang.float_to_binary(us * 1000 / count, decimals: 1) <> " ns" end

  IO.puts(
    "| #{n} / #{4 * n} #{label} | #{Harness.fmt_us(r.short.median_us)} | " <>
      "#{Harness.fmt_us(r.long.median_us)} | #{per.(r.short.median_us, n)} / " <>
      "#{per.(r.long.median_us, 4 * n)} |"
  )
end
