defmodule RustyJson.DecodePropertyTest do
  # PropEr (from apt) inside ExUnit: decode(encode(term)) round-trips for the encoders of every reference on this
  # VM (jiffy, OTP's :json; see RustyJson.Reference), and decoding generated JSON text (random whitespace, escapes,
  # unicode and number layouts) gives every reference's result.
  use ExUnit.Case, async: true

  alias RustyJson.Reference

  alias :proper_types, as: T
  alias RustyJson.Test.JsonGen

  # Terms of at most @max_size scalars (RustyJson.Test.JsonGen): a bounded cost per test, so that 400 tests take
  # seconds even with the CPU shared.
  @numtests 400
  @max_size 500

  defp check(prop), do: assert(JsonGen.check(prop, @numtests, @max_size) == true)

  test "decode(encode(term)) == term" do
    check(
      :proper.forall(JsonGen.value(4), fn term ->
        Enum.all?(Reference.names(), fn ref ->
          json = Reference.encode!(ref, term)

          RustyJson.decode!(json) === term and RustyJson.decode!(json, keys: :intern) === term and
            RustyJson.decode!(json, strings: :copy) === term
        end)
      end)
    )
  end

  # JSON text for a term, with choices (whitespace, escapes, number layout) drawn from a seeded generator. The
  # process's random state is PropEr's too: it is put back after.
  defp render(term, seed) do
    proper_state = :rand.export_seed()
    :rand.seed(:exsss, {seed, seed * 7 + 1, seed * 13 + 2})
    text = IO.iodata_to_binary([ws(), emit(term), ws()])
    if proper_state != :undefined, do: :rand.seed(proper_state)
    text
  end

  defp ws do
    Enum.map(1..Enum.random([0, 0, 0, 1, 3])//1, fn _ -> Enum.random([" ", "\t", "\n", "\r"]) end)
    |> Enum.take(Enum.random(0..3))
  end

  defp emit(nil), do: "null"
  defp emit(true), do: "true"
  defp emit(false), do: "false"

  defp emit(n) when is_integer(n) do
    case {n, Enum.random(1..4)} do
      {n, 1} when abs(n) < 1_000_000 -> [Integer.to_string(n), "e0"]
      _ -> Integer.to_string(n)
    end
  end

  defp emit(f) when is_float(f) do
    case Enum.random(1..3) do
      1 -> :erlang.float_to_binary(f, [:short])
      2 -> :erlang.float_to_binary(f, [{:scientific, 17}])
      3 -> :io_lib.format(~c"~.20e", [f]) |> to_string() |> String.replace("e+", "E")
    end
  end

  defp emit(s) when is_binary(s), do: [?", Enum.map(String.to_charlist(s), &char/1), ?"]

  defp emit(list) when is_list(list),
    do: ["[", ws(), Enum.map_intersperse(list, [ws(), ",", ws()], &emit/1), ws(), "]"]

  defp emit(map) when is_map(map) do
    pairs =
      Enum.map_intersperse(map, [ws(), ",", ws()], fn {k, v} ->
        [emit(k), ws(), ":", ws(), emit(v)]
      end)

    ["{", ws(), pairs, ws(), "}"]
  end

  @short %{
    ?" => "\\\"",
    ?\\ => "\\\\",
    ?\b => "\\b",
    ?\f => "\\f",
    ?\n => "\\n",
    ?\r => "\\r",
    ?\t => "\\t"
  }

  defp char(c) do
    cond do
      Map.has_key?(@short, c) and Enum.random(1..3) > 1 -> @short[c]
      c < 0x20 or c in [?", ?\\] or Enum.random(1..6) == 1 -> unicode_escape(c)
      c == ?/ and Enum.random(1..2) == 1 -> "\\/"
      true -> <<c::utf8>>
    end
  end

  defp unicode_escape(c) when c >= 0x10000 do
    c = c - 0x10000
    [hex4(0xD800 + Bitwise.bsr(c, 10)), hex4(0xDC00 + Bitwise.band(c, 0x3FF))]
  end

  defp unicode_escape(c), do: hex4(c)

  defp hex4(n) do
    hex = n |> Integer.to_string(16) |> String.pad_leading(4, "0")
    ["\\u", if(Enum.random(1..2) == 1, do: String.downcase(hex), else: hex)]
  end

  test "decoding generated JSON text gives the references' result" do
    check(
      :proper.forall(T.tuple([JsonGen.value(4), T.range(1, 1_000_000)]), fn {term, seed} ->
        json = render(term, seed)
        # (Maps are rendered from Map.new/1: no duplicate keys, where the references differ.)
        Enum.all?(Reference.names(), fn ref ->
          {:ok, expected} = Reference.decode(ref, json)

          RustyJson.decode!(json) === expected and
            RustyJson.decode!(json, keys: :intern) === expected
        end)
      end)
    )
  end
end
