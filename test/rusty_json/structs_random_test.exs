defmodule RustyJson.StructsRandomTest do
  use ExUnit.Case, async: true

  # Random documents mixing derived structs, custom implementations, fragments, ordered objects and dates with
  # plain data: the same JSON as their plain equivalent (structs as ordered objects with the fields they write).

  alias RustyJson.{Fragment, OrderedObject}
  alias RustyJson.Test.{Derived, DerivedOnly, Inner, Money, Point}

  defp gen(0), do: leaf()

  defp gen(depth) do
    case :rand.uniform(9) do
      1 -> %Derived{name: gen(depth - 1), age: leaf(), email: gen(depth - 1)}
      2 -> %DerivedOnly{id: leaf(), name: gen(depth - 1), secret: {:never, :written}}
      3 -> %Inner{x: gen(depth - 1)}
      4 -> %Point{x: gen(depth - 1), y: leaf()}
      5 -> %Money{amount: leaf(), currency: gen(depth - 1)}
      6 -> Enum.map(1..:rand.uniform(4), fn _ -> gen(depth - 1) end)
      7 -> Map.new(1..:rand.uniform(4), fn i -> {"k#{i}", gen(depth - 1)} end)
      8 -> OrderedObject.new([{"b", gen(depth - 1)}, {:a, leaf()}, {"b", leaf()}])
      9 -> fragment(leaf())
    end
  end

  defp fragment(value), do: Fragment.new(fn _opts -> RustyJson.encode!([value]) end)

  defp leaf do
    Enum.random([
      1,
      -2.5,
      "s</>é",
      nil,
      true,
      :atom,
      ~D[2026-01-02],
      ~U[2026-01-02 03:04:05.12Z],
      []
    ])
  end

  # Derived and Inner write their fields in the compiling VM's Map.keys order (their `__written__/0`).
  defp plain(%Derived{} = s), do: written(Derived, s)
  defp plain(%DerivedOnly{} = s), do: ordered(name: s.name, id: s.id)
  defp plain(%Inner{} = s), do: written(Inner, s)
  defp plain(%Point{x: x, y: y}), do: %{"xy" => [plain(x), plain(y)]}
  defp plain(%Money{} = s), do: ordered(amount: s.amount, currency: s.currency)

  defp plain(%OrderedObject{values: v}),
    do: %OrderedObject{values: Enum.map(v, fn {k, x} -> {k, plain(x)} end)}

  defp plain(%Fragment{} = f), do: f
  defp plain(%mod{} = d) when mod in [Date, DateTime], do: mod.to_iso8601(d)
  defp plain(list) when is_list(list), do: Enum.map(list, &plain/1)
  defp plain(map) when is_map(map), do: Map.new(map, fn {k, v} -> {k, plain(v)} end)
  defp plain(other), do: other

  defp written(module, s), do: ordered(Enum.map(module.__written__(), &{&1, Map.fetch!(s, &1)}))

  defp ordered(kv), do: OrderedObject.new(Enum.map(kv, fn {k, v} -> {k, plain(v)} end))

  test "random documents with structs encode like their plain equivalent" do
    :rand.seed(:exsss, {7, 8, 9})

    for i <- 1..400 do
      doc = gen(rem(i, 5) + 1)
      flat = plain(doc)

      for opts <- [[], [escape: :html_safe], [pretty: true], [maps: :strict]] do
        assert RustyJson.encode(doc, opts) == RustyJson.encode(flat, opts),
               "#{inspect(doc)} with #{inspect(opts)}"
      end
    end
  end

  test "large documents (dirty scheduler continuation) with structs" do
    :rand.seed(:exsss, {1, 1, 1})
    doc = Enum.map(1..4000, fn _ -> gen(3) end)
    flat = plain(doc)

    for opts <- [[], [pretty: true], [maps: :strict]] do
      assert RustyJson.encode(doc, opts) == RustyJson.encode(flat, opts)
    end
  end
end
