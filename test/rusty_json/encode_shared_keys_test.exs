defmodule RustyJson.EncodeSharedKeysTest do
  # Maps built from one literal share their keys, and an encode copies the keys it has written for such maps
  # (after seeing them twice) instead of writing them again. Every map must still come out as it does alone (a
  # single map is written without the copies), in every escape mode, whether the maps repeat, nest in maps of the
  # same keys, or alternate with maps whose keys are their own.
  use ExUnit.Case, async: true

  # Keys that each escape mode writes differently: a quote, a newline, é, U+2028, `<`, `/`, a control byte.
  defp record(i),
    do: %{
      "id" => i,
      "quote\"d" => "v#{i}",
      "line\nbreak" => i * 2,
      "é" => true,
      "sep\u2028" => nil,
      "<tag/>" => [i],
      "ctl\u0001" => 1.5
    }

  # Maps of the same keys inside each other: an inner one opens while the outer one's keys are being recorded.
  defp tree(0), do: %{"k\"" => 0, "next" => nil}
  defp tree(n), do: %{"k\"" => n, "next" => tree(n - 1)}

  # The same keys as `record/1`, each map with its own keys (not shared with any other).
  defp own_keys(i), do: Map.new(Map.to_list(record(i)))

  defp alone(list, opts),
    do: "[" <> Enum.map_join(list, ",", &RustyJson.encode!(&1, opts)) <> "]"

  for escape <- [:json, :javascript_safe, :html_safe, :unicode_safe] do
    test "repeated, nested and mixed maps as each alone, escape: #{escape}" do
      opts = [escape: unquote(escape)]
      records = for i <- 1..300, do: record(i)
      assert RustyJson.encode!(records, opts) == alone(records, opts)

      trees = for n <- 0..40, do: tree(rem(n, 7))
      assert RustyJson.encode!(trees, opts) == alone(trees, opts)

      mixed = for i <- 1..300, do: if(rem(i, 3) == 0, do: own_keys(i), else: record(i))
      assert RustyJson.encode!(mixed, opts) == alone(mixed, opts)

      # 97 key sets, each shared by the maps updated from it (more than the cache keeps at once): each kept,
      # evicted or left unrecorded, never mixed up.
      bases = List.to_tuple(for j <- 0..96, do: Map.put(record(0), "extra#{j}", j))
      shapes = for i <- 1..2_000, do: %{elem(bases, rem(i * 7, 97)) | "id" => i}
      assert RustyJson.encode!(shapes, opts) == alone(shapes, opts)
    end
  end

  test "pretty output and maps: :strict write the same keys" do
    records = for i <- 1..100, do: record(i)
    compact = alone(records, [])

    assert RustyJson.encode!(records, pretty: true) ==
             RustyJson.Formatter.pretty_print(compact)

    assert RustyJson.encode!(records, maps: :strict) == compact
  end
end
