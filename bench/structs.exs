# Structs benchmark: derived structs (written natively from their compile-time templates) against the same data as
# plain maps, encoded by RustyJson and by jiffy. Run: mix run bench/structs.exs
# Options: RUSTYJSON_BENCH_ROUNDS (default 15).
Code.require_file("../test/support/apt_libs.exs", __DIR__)
Code.require_file("harness.exs", __DIR__)
RustyJson.AptLibs.add_paths!([:jiffy])

alias RustyJson.Bench.{Branch, Custom, Harness, Leaf, Root, S10, S5}

rounds = String.to_integer(System.get_env("RUSTYJSON_BENCH_ROUNDS", "15"))

s5 = fn i ->
  %S5{
    id: i,
    name: "user #{i}",
    email: "user#{i}@example.com",
    active: rem(i, 2) == 0,
    score: i * 1.5
  }
end

s10 = fn i ->
  %S10{
    id: i,
    name: "user #{i}",
    email: "user#{i}@example.com",
    active: true,
    score: i * 0.25,
    city: "Lyon",
    zip: "69001",
    tags: ["a", "b"],
    created: "2026-11-22T12:00:00Z",
    ratio: 0.5
  }
end

nested = fn ->
  %Root{
    id: 1,
    branches:
      for b <- 1..10 do
        %Branch{id: b, leaves: for(l <- 1..10, do: %Leaf{id: l, label: "leaf #{b}.#{l}"})}
      end
  }
end

dated = fn i ->
  %S5{
    id: i,
    name: "user #{i}",
    email: ~U[2026-11-22 12:00:00.123456Z],
    active: ~D[2026-11-22],
    score: i
  }
end

custom = fn i ->
  %Custom{id: i, name: "user #{i}", email: "user#{i}@example.com", active: true, score: i * 1.5}
end

# The same data as plain maps (string keys, as jiffy needs; RustyJson writes them the same way).
plain = fn
  term, plain when is_list(term) ->
    Enum.map(term, &plain.(&1, plain))

  %module{} = s, _plain when module in [Date, DateTime] ->
    module.to_iso8601(s)

  %_{} = s, plain ->
    s |> Map.from_struct() |> Map.new(fn {k, v} -> {Atom.to_string(k), plain.(v, plain)} end)

  other, _plain ->
    other
end

cases = [
  {"1 struct, 5 fields", s5.(1)},
  {"1 struct, 10 fields", s10.(1)},
  {"1000 structs, 5 fields", Enum.map(1..1000, s5)},
  {"1000 structs, 10 fields", Enum.map(1..1000, s10)},
  {"1000 structs with dates", Enum.map(1..1000, dated)},
  {"3-level nesting (111)", nested.()},
  {"100 custom defimpl", Enum.map(1..100, custom)}
]

IO.puts(
  String.pad_trailing("case", 26) <>
    Enum.map_join(
      ["structs", "plain maps", "jiffy maps", "st/maps", "st/jiffy"],
      &String.pad_leading(&1, 12)
    )
)

rows =
  for {name, term} <- cases do
    maps = plain.(term, plain)
    # Same output (key order aside for jiffy): checked once.
    true =
      RustyJson.decode!(RustyJson.encode!(term)) == RustyJson.decode!(RustyJson.encode!(maps))

    r =
      Harness.compare(
        [
          {:structs, fn -> RustyJson.encode!(term) end},
          {:maps, fn -> RustyJson.encode!(maps) end},
          {:jiffy, fn -> :jiffy.encode(maps) end}
        ],
        rounds: rounds
      )

    [s, m, j] = Enum.map([:structs, :maps, :jiffy], &r[&1].median_us)

    IO.puts(
      String.pad_trailing(name, 26) <>
        Enum.map_join(
          [Harness.fmt_us(s), Harness.fmt_us(m), Harness.fmt_us(j)] ++
            [
              :erlang.float_to_binary(Harness.ratio(r, :structs, :maps), decimals: 2),
              :erlang.float_to_binary(Harness.ratio(r, :structs, :jiffy), decimals: 2)
            ],
          &String.pad_leading(&1, 12)
        )
    )

    {name, s, m, j}
  end

_ = rows
