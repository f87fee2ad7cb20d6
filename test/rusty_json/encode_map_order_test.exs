defmodule RustyJson.EncodeMapOrderTest do
  # Maps are written in the running VM's `Map.to_list/1` order, as Jason writes them there: flatmaps (32 keys or
  # fewer) in key order, hash maps in whatever order the VM lists them (OTP 29 lists them in the opposite
  # direction of the NIF map iterator from earlier releases: the NIF learns the direction at load).
  # Not async: one test switches the learned order off, for the whole VM.
  use ExUnit.Case, async: false

  alias RustyJson.Native

  # The JSON of `map` in `Map.to_list/1` order, values encoded on their own.
  defp expected(map) do
    "{" <>
      Enum.map_join(Map.to_list(map), ",", fn {k, v} ->
        RustyJson.encode!(to_string(k)) <> ":" <> RustyJson.encode!(v)
      end) <> "}"
  end

  defp maps do
    for n <- [1, 2, 31, 32, 33, 34, 40, 64, 65, 100, 1_000, 5_000],
        keys <- [&"key_#{&1}", &String.to_atom("map_order_atom_#{&1}"), & &1] do
      Map.new(1..n, &{keys.(&1), &1})
    end
  end

  # RUSTYJSON_FAST_PATHS=off (the suite's second run) leaves the order unknown.
  defp learned do
    if System.get_env("RUSTYJSON_FAST_PATHS") == "off",
      do: [:unknown],
      else: [:from_head, :from_tail]
  end

  test "the NIF learned the map order at load" do
    assert Native.map_order() in learned()
  end

  test "maps of every size and key kind, alone and nested, are written in Map.to_list/1 order" do
    for map <- maps() do
      assert RustyJson.encode!(map) == expected(map), "#{map_size(map)} keys"

      assert IO.iodata_to_binary(RustyJson.encode_to_iodata!([map])) ==
               "[" <> expected(map) <> "]"

      assert RustyJson.encode!(%{"outer" => map}) == ~s({"outer":) <> expected(map) <> "}"
    end
  end

  test "a large document that yields mid-map keeps the order" do
    # 200,000 keys and long values: the encode is sliced and resumes inside the map.
    map = Map.new(1..200_000, &{"key_#{&1}", String.duplicate("v", rem(&1, 50))})
    assert RustyJson.encode!(map) == expected(map)
    assert RustyJson.encode!([map, map]) == "[" <> expected(map) <> "," <> expected(map) <> "]"
  end

  test "with the order unknown, Elixir lists hash maps and the output is the same" do
    outputs = Enum.map(maps(), &RustyJson.encode!/1)

    try do
      assert Native.learn_map_order(%{}, []) == :unknown
      :persistent_term.put({Native, :map_order}, :unknown)
      assert Enum.map(maps(), &RustyJson.encode!/1) == outputs

      assert Enum.map(maps(), &RustyJson.encode!(&1, pretty: true)) ==
               Enum.map(outputs, &RustyJson.Formatter.pretty_print/1)
    after
      Native.learn_map_order()
    end

    assert Native.map_order() in learned()
  end
end
