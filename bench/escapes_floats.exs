# Issue #50's content kinds, generated here (none in ../shared): text with escapes and floats, RustyJson against
# the ETF floor (`:erlang.term_to_binary/1` and `binary_to_term/1` of the same term) and jiffy, best of N.
#   taskset -c 1 mix run bench/escapes_floats.exs [N]
n = String.to_integer(List.first(System.argv()) || "30")
:rand.seed(:exsss, {50, 50, 50})

words = ~w(alpha beta gamma δέλτα эпсилон 漢字 한국어 😀👍 naïve straße)
escapes = ["\t", "\"", "\\", <<1>>]

sentence = fn ->
  Enum.map_join(1..20, " ", fn _ -> Enum.random(words) end) <>
    Enum.random(escapes) <>
    Enum.map_join(1..2, " ", fn _ -> Enum.random(words) end)
end

shapes = [
  {"text_with_escapes", for(_ <- 1..4_000, do: %{"text" => sentence.()})},
  {"one_escape_kind_tab",
   for(
     i <- 1..4_000,
     do: %{"text" => String.duplicate("a", 70) <> "\t#{i}" <> String.duplicate("b", 70)}
   )},
  {"coordinates",
   for(
     _ <- 1..60_000,
     do: [:rand.uniform() * 360 - 180, :rand.uniform() * 180 - 90, :rand.uniform() * 1000]
   )},
  {"metrics",
   for(i <- 1..50_000, do: [1_700_000_000_000 + i * 1000, Float.round(:rand.uniform() * 1000, 3)])}
]

:jiffy.encode(1)

for {name, term} <- shapes do
  json = RustyJson.encode!(term)
  etf = :erlang.term_to_binary(term)
  # The best of n calls after one warm-up call, in a fresh process.
  t = fn f ->
    Task.async(fn ->
      f.()
      Enum.min(for _ <- 1..n, do: elem(:timer.tc(f), 0))
    end)
    |> Task.await(:infinity)
  end

  {e, d} = {t.(fn -> RustyJson.encode!(term) end), t.(fn -> RustyJson.decode!(json) end)}

  {fe, fd} =
    {t.(fn -> :erlang.term_to_binary(term) end), t.(fn -> :erlang.binary_to_term(etf) end)}

  {je, jd} =
    {t.(fn -> :jiffy.encode(term) end), t.(fn -> :jiffy.decode(json, [:return_maps]) end)}

  r = fn a, b -> Float.round(a / max(b, 1), 2) end

  IO.puts(
    "#{name} (#{div(byte_size(json), 1000)} KB): encode #{e} µs (#{r.(e, fe)}x floor, #{r.(e, je)} of jiffy), " <>
      "decode #{d} µs (#{r.(d, fd)}x floor, #{r.(d, jd)} of jiffy)"
  )
end
