defmodule RustyJson.DecodeLargeMapsTest do
  # Objects of 33 to 256 binary keys whose key sequence was seen before are written from the trie of the first
  # such object (`native/rustyjson_nif/src/term/hamt.rs`), and the tries are kept between calls; other objects of
  # more than 32 binary keys are laid out from the VM's hash of each key (`term/hash_trie.rs`).
  # These maps must be indistinguishable from the VM's: every key found, equal to `Map.new/1` of the pairs,
  # usable by every map operation, surviving copies and collections.
  use ExUnit.Case, async: true

  defp object(keys, values), do: raw_object(Enum.map(keys, &RustyJson.encode!/1), values)

  # Keys given as JSON text (with their quotes and escapes).
  defp raw_object(keys, values) do
    "{" <> Enum.map_join(Enum.zip(keys, values), ",", fn {k, v} -> k <> ":" <> v end) <> "}"
  end

  defp keys(n, prefix \\ "key_"), do: Enum.map(1..n, &"#{prefix}#{&1}")

  # The map Jason gives: the first of duplicate keys wins.
  defp expected(keys, values) do
    keys
    |> Enum.zip(Enum.map(values, &RustyJson.decode!/1))
    |> Enum.reverse()
    |> Map.new()
  end

  defp assert_same_map(ours, expected) do
    assert ours == expected
    assert map_size(ours) == map_size(expected)
    for {k, v} <- expected, do: assert(Map.fetch!(ours, k) === v)
    assert Map.keys(ours) |> Enum.sort() == Map.keys(expected) |> Enum.sort()
    assert :erlang.phash2(ours) == :erlang.phash2(expected)
    assert :erlang.binary_to_term(:erlang.term_to_binary(ours)) == expected
  end

  test "objects of every size from 33 to 256 keys, each seen three times, equal the VM's maps" do
    for n <- Enum.to_list(33..80) ++ [100, 128, 200, 255, 256, 257, 300] do
      ks = keys(n)

      for round <- 1..3 do
        values = Enum.map(1..n, &"#{&1 * round}")
        assert_same_map(RustyJson.decode!(object(ks, values)), expected(ks, values))
      end
    end
  end

  # The same trie as the VM's: its pairs listed in the same order, and the same external form (both follow the
  # trie), besides every check of `assert_same_map/2`.
  defp assert_same_trie(ours, expected) do
    assert_same_map(ours, expected)
    assert Map.to_list(ours) == Map.to_list(expected)
    assert :erlang.term_to_binary(ours) == :erlang.term_to_binary(expected)
  end

  test "objects of distinct keys, 33 to 20,000 of them, each once: the VM's own trie" do
    :rand.seed(:exsss, {57, 33, 20})
    letters = fn len -> for _ <- 1..len, into: "", do: <<Enum.random(?a..?z)>> end

    for n <- [33, 47, 48, 64, 65, 100, 257, 500, 1_000, 4_097, 20_000] do
      ks = Enum.uniq(for _ <- 1..n, do: letters.(1 + :rand.uniform(12)))
      values = Enum.map(1..length(ks), &"#{&1}")
      expected = expected(ks, values)
      assert_same_trie(RustyJson.decode!(object(ks, values)), expected)

      # Long keys are held off the heap (sub-binaries of the input, or copies): hashed by their bytes alike.
      long = Enum.map(ks, &String.duplicate(&1, 8))
      assert_same_trie(RustyJson.decode!(object(long, values)), expected(long, values))

      assert_same_trie(
        RustyJson.decode!(object(long, values), keys: :copy),
        expected(long, values)
      )
    end
  end

  test "an object of 1,000 keys with duplicates keeps the first of each, as Jason does" do
    ks = keys(1_000) ++ ["key_3", "key_999", "key_3"]
    values = Enum.map(1..1_003, &"#{&1}")
    decoded = RustyJson.decode!(object(ks, values))
    assert map_size(decoded) == 1_000 and decoded["key_3"] == 3 and decoded["key_999"] == 999
    assert_same_trie(decoded, expected(ks, values))
  end

  test "an array of same-shaped large objects: every element has its own values" do
    ks = keys(40, "field")
    rows = for i <- 1..200, do: Enum.map(1..40, &~s("r#{i}c#{&1}"))
    json = "[" <> Enum.map_join(rows, ",", &object(ks, &1)) <> "]"
    decoded = RustyJson.decode!(json)

    for {map, values} <- Enum.zip(decoded, rows), do: assert_same_map(map, expected(ks, values))
    # Through the in-heap decode too (small enough) and the detached one (large enough).
    assert byte_size(json) > 65_536
    small = "[" <> Enum.map_join(Enum.take(rows, 10), ",", &object(ks, &1)) <> "]"
    assert RustyJson.decode!(small) == Enum.take(decoded, 10)
  end

  test "the same keys in another order, a key more or less, or other bytes are other shapes" do
    ks = keys(50)
    values = Enum.map(1..50, &"#{&1}")
    variants = [ks, Enum.reverse(ks), tl(ks), ks ++ ["extra"], List.replace_at(ks, 7, "key_7x")]

    for _ <- 1..3, variant <- variants do
      vs = Enum.take(values ++ ["0"], length(variant))
      assert_same_map(RustyJson.decode!(object(variant, vs)), expected(variant, vs))
    end
  end

  # The shape's hash reads each key's length and first and last 8 bytes: keys that differ only between them hash
  # alike, and the byte comparison must tell the shapes apart.
  test "keys that differ only in their middle bytes are other shapes" do
    long = for i <- 1..40, do: "prefix__" <> String.pad_leading("#{i}", 4, "0") <> "__suffix"
    middle = List.replace_at(long, 20, "prefix__XXXX__suffix")
    values = Enum.map(1..40, &"#{&1}")

    for _ <- 1..3, variant <- [long, middle] do
      assert_same_map(RustyJson.decode!(object(variant, values)), expected(variant, values))
    end
  end

  test "more shapes than the table holds, cycling: evicted tries are read again, results stay right" do
    # 40 shapes in a 16-slot table: slots are shared (and shapes evicted) whatever the hash does.
    shapes = for s <- 1..40, do: keys(33 + rem(s, 7), "s#{s}_")

    rows =
      for round <- 1..3, shape <- shapes do
        {shape, Enum.map(1..length(shape), &"#{&1 + round}")}
      end

    json = "[" <> Enum.map_join(rows, ",", fn {ks, vs} -> object(ks, vs) end) <> "]"
    decoded = RustyJson.decode!(json)
    assert length(decoded) == 120

    for {map, {ks, vs}} <- Enum.zip(decoded, rows), do: assert_same_map(map, expected(ks, vs))
  end

  test "a shape with a duplicate key keeps the first value every time" do
    ks = keys(40) ++ ["key_3"]
    values = Enum.map(1..41, &"#{&1}")

    for _ <- 1..3 do
      decoded = RustyJson.decode!(object(ks, values))
      assert map_size(decoded) == 40
      assert decoded["key_3"] == 3
      assert_same_map(decoded, expected(ks, values))
    end
  end

  test "every key option, escaped keys, long keys and nested large objects" do
    ks = Enum.map(1..45, &~s("k\\u00e9y_#{&1}")) ++ [~s("#{String.duplicate("long_key_", 5)}")]
    decoded_keys = Enum.map(ks, &RustyJson.decode!/1)
    assert hd(decoded_keys) == "kéy_1"
    inner = object(keys(35, "in"), Enum.map(1..35, &"#{&1}.5"))
    values = Enum.map(1..46, fn i -> if rem(i, 9) == 0, do: inner, else: ~s("v#{i}") end)
    json = "[" <> Enum.map_join(1..4, ",", fn _ -> raw_object(ks, values) end) <> "]"

    expected =
      decoded_keys
      |> Enum.zip(Enum.map(values, &RustyJson.decode!/1))
      |> Map.new()

    for opts <- [
          [],
          [keys: :copy],
          [keys: :intern],
          [strings: :copy],
          [keys: :intern, strings: :copy]
        ] do
      decoded = RustyJson.decode!(json, opts)
      assert length(decoded) == 4
      for map <- decoded, do: assert_same_map(map, expected)
    end

    atoms =
      RustyJson.decode!(object(keys(40, "atom_key_"), Enum.map(1..40, &"#{&1}")), keys: :atoms)

    assert atoms[:atom_key_40] == 40 and map_size(atoms) == 40
  end

  test "maps written from a trie work with every map operation, in messages and after collections" do
    ks = keys(64)
    values = Enum.map(1..64, &"#{&1}")
    _first = RustyJson.decode!(object(ks, values))
    map = RustyJson.decode!(object(ks, values))
    assert_same_map(map, expected(ks, values))

    updated = map |> Map.put("key_1", :changed) |> Map.delete("key_64") |> Map.put("new", 1)

    assert updated["key_1"] == :changed and not Map.has_key?(updated, "key_64") and
             updated["new"] == 1

    assert map_size(updated) == 64
    assert Map.merge(map, %{"key_2" => 0})["key_2"] == 0
    assert map |> :maps.iterator() |> Stream.unfold(&next/1) |> Enum.count() == 64
    assert Map.take(map, ["key_5", "key_6", "nope"]) == %{"key_5" => 5, "key_6" => 6}
    assert %{"key_33" => 33, "key_34" => 34} = map

    parent = self()
    pid = spawn(fn -> receive(do: ({:map, m} -> send(parent, {:back, m, m["key_10"]}))) end)
    send(pid, {:map, map})
    assert_receive {:back, copy, 10}
    assert copy == map
    :erlang.garbage_collect()
    assert_same_map(map, expected(ks, values))
  end

  defp next(iter) do
    case :maps.next(iter) do
      {k, v, rest} -> {{k, v}, rest}
      :none -> nil
    end
  end
end
