defmodule RustyJson.EncodeSortKeysTest do
  use ExUnit.Case, async: true

  # `sort_keys: true`: every object's keys in byte order of the key string (atoms and numbers converted). The
  # expected text is built by `model/2`: each map's `Map.to_list/1` stably sorted by the converted key with
  # Elixir's own sort (binaries compare bytewise), scalars and key strings written by a plain encode (whose order
  # plays no part).

  alias RustyJson.{EncodeOptions, Fragment, OrderedObject}
  alias RustyJson.Test.{Derived, DerivedOnly, Envelope, Inner, Label, Outer, Point}

  @modes [:json, :javascript_safe, :html_safe, :unicode_safe]

  defp model(%Derived{} = s, mode), do: model(Map.take(s, Derived.__written__()), mode)
  defp model(%DerivedOnly{} = s, mode), do: model(Map.take(s, [:name, :id]), mode)
  defp model(%Inner{} = s, mode), do: model(Map.take(s, [:x, :y]), mode)

  defp model(map, mode) when is_map(map) and not is_struct(map) do
    map
    |> Map.to_list()
    |> Enum.sort_by(fn {key, _value} -> key_string(key) end)
    |> Enum.map_join(",", fn {key, value} ->
      RustyJson.encode!(key_string(key), escape: mode) <> ":" <> model(value, mode)
    end)
    |> then(&("{" <> &1 <> "}"))
  end

  defp model(list, mode) when is_list(list),
    do: "[" <> Enum.map_join(list, ",", &model(&1, mode)) <> "]"

  defp model(scalar, mode), do: RustyJson.encode!(scalar, escape: mode)

  defp key_string(key) when is_atom(key), do: Atom.to_string(key)
  defp key_string(key), do: to_string(key)

  defp sorted!(term, opts \\ []), do: RustyJson.encode!(term, [sort_keys: true] ++ opts)

  # Keys of every kind the NIF converts, ASCII and not: atoms, integers, binaries, multi-byte UTF-8.
  defp mixed_keys(n) do
    Map.new(1..n, fn i ->
      key =
        case rem(i, 5) do
          0 -> :"atom_#{i}"
          1 -> i * 7919 - 50_000
          2 -> "bin_#{i}"
          3 -> "é_#{i}"
          4 -> "日本_#{i}<\u2028"
        end

      {key, i}
    end)
  end

  test "small maps, nested maps and lists of maps, in every escape mode" do
    doc = %{
      "zebra" => [%{b: 1, a: [%{"y" => 1, "x" => %{d: nil, c: true}}]}, 2],
      :apple => %{"Z" => 1, "a" => 2, "_" => 3, "" => 4},
      10 => "ten",
      9 => "nine",
      "é" => 1,
      "e" => 2,
      "<tag>" => "\u2028"
    }

    for mode <- @modes do
      assert sorted!(doc, escape: mode) == model(doc, mode)
    end
  end

  test "maps of more than 32 keys (hash maps), nested, with atom, integer, binary and non-ASCII keys" do
    big = mixed_keys(200)
    doc = %{"list" => [big, %{"inner" => mixed_keys(40)}], "flat" => mixed_keys(32)}

    for mode <- @modes do
      json = sorted!(doc, escape: mode)
      assert json == model(doc, mode)
    end

    # The keys really come out in Elixir's byte order of their strings.
    keys =
      big |> sorted!() |> RustyJson.decode!(objects: :ordered_objects) |> Enum.map(&elem(&1, 0))

    assert keys == Enum.sort(Enum.map(Map.keys(big), &key_string/1))
  end

  test "the order does not depend on the escape mode (keys are compared before escaping)" do
    doc = %{"\u2028" => 1, "<" => 2, "a" => 3, "é" => 4, "\"" => 5}

    orders =
      for mode <- @modes,
          do: doc |> sorted!(escape: mode) |> RustyJson.decode!(objects: :ordered_objects)

    assert Enum.uniq(orders) |> length() == 1
    assert Enum.map(hd(orders), &elem(&1, 0)) == Enum.sort(Map.keys(doc))
  end

  test "float keys and keys Elixir converts (String.Chars) are sorted by their strings" do
    doc = %{1.5 => "a", 0.25 => "b", 10 => "c", %Label{text: "b"} => 1, "label:a" => 2}

    keys =
      doc |> sorted!() |> RustyJson.decode!(objects: :ordered_objects) |> Enum.map(&elem(&1, 0))

    assert keys == Enum.sort(["1.5", "0.25", "10", "label:b", "label:a"])
  end

  test "keys equal after conversion are both kept, in Map.to_list order; maps: :strict reports them" do
    small = %{:a => 1, "a" => 2, :b => 3}
    assert sorted!(small) == model(small, :json)
    assert sorted!(small) == ~s({"a":1,"a":2,"b":3})

    big = Map.merge(mixed_keys(60), %{:dup => 1, "dup" => 2})
    assert sorted!(big) == model(big, :json)

    for doc <- [small, big] do
      assert {:error, %RustyJson.EncodeError{message: "duplicate key: " <> _}} =
               RustyJson.encode(doc, sort_keys: true, maps: :strict)
    end

    assert sorted!(mixed_keys(60), maps: :strict) == model(mixed_keys(60), :json)
  end

  test "derived structs write their fields sorted, from the template and through the protocol" do
    structs = [
      %Derived{name: "n", age: %{z: 1, y: 2}, email: "e"},
      %DerivedOnly{id: 1, name: %{"b" => 1, "a" => 2}, secret: "s"},
      %Inner{x: %{q: 1, p: 2}, y: [%{b: 1, a: 2}]}
    ]

    # Twice: the first call may meet a module for the first time (a hole filled in Elixir), the second writes
    # it from the registered template.
    for _ <- 1..2, mode <- @modes do
      assert sorted!(structs, escape: mode) == model(structs, mode)
    end

    nested = %Outer{
      middle: %RustyJson.Test.Middle{tag: "t", inner: %Inner{x: 1}},
      list: [],
      at: 2
    }

    keys = nested |> sorted!() |> RustyJson.decode!(objects: :ordered_objects)
    assert Enum.map(keys, &elem(&1, 0)) == Enum.sort(Enum.map(Outer.__written__(), &to_string/1))
    assert Enum.map(keys["middle"], &elem(&1, 0)) == ["inner", "tag"]

    # A derived struct with a key its template does not know goes through the derived body: sorted too.
    odd = Map.put(%Derived{name: 1, age: 2, email: 3}, :extra, 4)
    assert sorted!(odd) == model(%Derived{name: 1, age: 2, email: 3}, :json)
  end

  test "hand-written implementations get sort_keys in their opts; their keyword lists keep their order" do
    doc = %{
      "b" => %Envelope{body: %{y: 1, x: 2}, meta: %{d: 1, c: 2}},
      "a" => %Point{x: %{n: 1, m: 2}, y: 1}
    }

    assert sorted!(doc) ==
             ~s({"a":{"xy":[{"m":2,"n":1},1]},"b":[{"alpha":1,"zeta":{"x":2,"y":1}},{"z":{"c":2,"d":1},"a":2}]})

    # Without the option the implementation's map comes out in Map.to_list order, as before.
    assert RustyJson.encode!(%Envelope{body: 1, meta: 2}) ==
             "[" <> RustyJson.encode!(%{"zeta" => 1, "alpha" => 1}) <> ~s(,{"z":2,"a":2}])
  end

  test "ordered objects keep their order (their values are sorted); fragments are written as they are" do
    obj = OrderedObject.new(z: %{b: 1, a: 2}, a: [%{d: 1, c: 2}])
    assert sorted!(obj) == ~s({"z":{"a":2,"b":1},"a":[{"c":2,"d":1}]})

    fragment = Fragment.new(~s({"z":1,"a":2}))
    assert sorted!(%{b: fragment, a: 1}) == ~s({"a":1,"b":{"z":1,"a":2}})
  end

  test "pretty output is the sorted compact output laid out, with and without structs left to Elixir" do
    doc = %{
      "b" => [%{z: 1, y: %Derived{name: 1, age: 2, email: 3}}],
      "a" => %Envelope{body: %{k: 1, j: 2}, meta: 1}
    }

    for mode <- @modes, pretty <- [true, [indent: "\t", after_colon: ""]] do
      compact = sorted!(doc, escape: mode)

      assert sorted!(doc, escape: mode, pretty: pretty) ==
               RustyJson.Formatter.pretty_print(compact, pretty_opts(pretty))
    end

    plain = %{"b" => [%{z: 1, y: 2}], "a" => mixed_keys(40)}
    assert sorted!(plain, pretty: true) == RustyJson.Formatter.pretty_print(model(plain, :json))
  end

  defp pretty_opts(true), do: []
  defp pretty_opts(opts), do: opts

  test "derived keys that are prefixes of others sort before them (names compared, not their quoted text)" do
    value = %RustyJson.Test.Prefixed{"a b": 1, a: 2, a!: 3, ab: 4}
    expected = model(Map.from_struct(value), :json)
    assert expected == ~s({"a":2,"a b":1,"a!":3,"ab":4})

    # Written by the NIF from the sorted template, and by the derived Elixir body (a struct with an extra key).
    assert sorted!(value) == expected
    assert sorted!([value, %{z: value}]) == "[" <> expected <> ~s(,{"z":) <> expected <> "}]"

    assert IO.iodata_to_binary(
             RustyJson.Encoder.encode(
               Map.put(value, :extra, 0),
               EncodeOptions.new(sort_keys: true)
             )
           ) == expected
  end

  test "a document big enough to leave the first slice is sorted the same" do
    rows =
      for i <- 1..20_000,
          do: %{"id" => i, "name" => "row #{i}", :tags => %{z: i, a: -i}, "b" => [i]}

    doc = %{"rows" => rows, "index" => mixed_keys(500)}
    assert sorted!(doc) == model(doc, :json)
  end

  test "sort_keys: false and no sort_keys leave the options the NIF reads as they were" do
    assert EncodeOptions.new(sort_keys: false) == EncodeOptions.new([])
    assert tuple_size(EncodeOptions.new(escape: :html_safe, maps: :strict, pretty: true)) == 3
    assert EncodeOptions.new(sort_keys: true) == {:json, false, nil, true}
    assert RustyJson.encode!(%{b: 1, a: 2}, sort_keys: false) == RustyJson.encode!(%{b: 1, a: 2})
  end

  test "an invalid sort_keys value raises an ArgumentError naming the option" do
    assert_raise ArgumentError, ~r/:sort_keys option: :yes/, fn ->
      RustyJson.encode(%{}, sort_keys: :yes)
    end
  end
end
