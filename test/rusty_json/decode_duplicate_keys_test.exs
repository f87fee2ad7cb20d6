defmodule RustyJson.DecodeDuplicateKeysTest do
  # Objects with duplicate keys decode to well-formed maps holding the first value of each key (Jason's rule), on
  # every VM, at every size and however many distinct keys remain. A map the VM would never make (a hash map of
  # 32 keys or fewer) is `==` but not `===` to the real one, and map-key lookups, ETS lookups and
  # `term_to_binary` round trips miss it.
  use ExUnit.Case, async: true

  defp json(pairs), do: "{" <> Enum.map_join(pairs, ",", fn {k, v} -> ~s("#{k}":#{v}) end) <> "}"

  defp first_wins(pairs),
    do: Enum.reduce(pairs, %{}, fn {k, v}, acc -> Map.put_new(acc, k, v) end)

  defp assert_well_formed(decoded, expected) do
    assert decoded === expected
    assert map_size(decoded) == map_size(expected)
    assert Map.fetch(%{expected => :found}, decoded) == {:ok, :found}
    assert Map.fetch(%{decoded => :found}, expected) == {:ok, :found}
    assert :erlang.phash2(decoded) == :erlang.phash2(expected)
    assert :erlang.binary_to_term(:erlang.term_to_binary(decoded)) === expected
    table = :ets.new(__MODULE__, [:set, :private])
    :ets.insert(table, {expected, :stored})
    assert :ets.lookup(table, decoded) == [{expected, :stored}]
    :ets.delete(table)
  end

  # Key sequences of `n` pairs with duplicates: one key throughout, `d` keys cycling, or all distinct but the
  # last, which repeats the first.
  defp patterns(n) do
    cycles =
      for d <- Enum.uniq([1, 2, 31, 32, 33, div(n, 2)]),
          d >= 1 and d < n,
          do: {d, &"k#{rem(&1, d)}"}

    last_repeats = {n - 1, &"k#{if &1 == n - 1, do: 0, else: &1}"}
    for {_distinct, key} <- [last_repeats | cycles], do: Enum.map(0..(n - 1), &{key.(&1), &1})
  end

  test "every object size from 2 to 300 pairs, every duplicate pattern and key option" do
    for n <- 2..300, pairs <- patterns(n) do
      expected = first_wins(pairs)
      text = json(pairs)

      for opts <- [[], [keys: :copy], [keys: :intern], [strings: :copy]] do
        assert_well_formed(RustyJson.decode!(text, opts), expected)
      end

      atoms = Map.new(expected, fn {k, v} -> {String.to_atom(k), v} end)
      assert_well_formed(RustyJson.decode!(text, keys: :atoms), atoms)
    end
  end

  test "the same object with duplicates many times in one document (shapes and tries reused)" do
    for n <- [33, 40, 64, 100, 257], pairs <- patterns(n) do
      expected = first_wins(pairs)
      doc = "[" <> Enum.map_join(1..5, ",", fn _ -> json(pairs) end) <> "]"

      for opts <- [[], [keys: :intern]], decoded <- RustyJson.decode!(doc, opts) do
        assert_well_formed(decoded, expected)
      end
    end
  end

  # Two 1M-pair documents: 7 s on an idle 2-core machine, 18 s beside a second suite and a cargo build; the default
  # 60 s would leave little room on a busier one.
  @tag timeout: 300_000
  test "a million pairs: one duplicate, or ten distinct keys" do
    n = 1_000_000

    one_duplicate = Enum.map(0..(n - 1), &{"key_#{&1}", &1}) ++ [{"key_5", -1}]
    ten_keys = Enum.map(0..(n - 1), &{"k#{rem(&1, 10)}", &1})

    for pairs <- [one_duplicate, ten_keys] do
      decoded = RustyJson.decode!(json(pairs))
      expected = first_wins(pairs)
      assert decoded === expected
      assert map_size(decoded) == map_size(expected)
      assert Map.fetch(%{expected => :found}, decoded) == {:ok, :found}
      assert :erlang.binary_to_term(:erlang.term_to_binary(decoded)) === expected
    end
  end
end
