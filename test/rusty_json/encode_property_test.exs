defmodule RustyJson.EncodePropertyTest do
  # PropEr (from apt): any JSON-like term encodes to valid UTF-8 that every reference decoder on this VM (jiffy,
  # OTP's :json; see RustyJson.Reference) decodes back to the term as JSON sees it (atoms and keys as strings).
  use ExUnit.Case, async: true

  alias RustyJson.Reference

  defp leaf do
    :proper_types.oneof([
      :proper_types.integer(),
      :proper_types.integer(-(2 ** 80), 2 ** 80),
      :proper_types.float(),
      :proper_types.boolean(),
      :proper_types.exactly(nil),
      :proper_types.elements([:foo, :é, :"with space", :"quote\""]),
      :proper_unicode.utf8()
    ])
  end

  defp json_term(0), do: leaf()

  defp json_term(size) do
    smaller = json_term(div(size, 3))

    :proper_types.frequency([
      {3, leaf()},
      {1, :proper_types.list(smaller)},
      {1,
       :proper_types.tuple([
         :proper_types.exactly(:map),
         :proper_types.list(:proper_types.tuple([:proper_unicode.utf8(), smaller]))
       ])}
    ])
  end

  # This PropEr has no map generator: maps are generated as {:map, pairs} and built here.
  defp build({:map, pairs}), do: Map.new(pairs, fn {k, v} -> {k, build(v)} end)
  defp build(list) when is_list(list), do: Enum.map(list, &build/1)
  defp build(other), do: other

  defp normalize(atom) when atom in [nil, true, false], do: atom
  defp normalize(atom) when is_atom(atom), do: Atom.to_string(atom)
  defp normalize(list) when is_list(list), do: Enum.map(list, &normalize/1)

  defp normalize(map) when is_map(map),
    do: Map.new(map, fn {k, v} -> {to_string(k), normalize(v)} end)

  defp normalize(other), do: other

  defp roundtrips?(term, opts) do
    json = RustyJson.encode!(term, opts)
    expected = {:ok, normalize(term)}

    String.valid?(json) and
      Enum.all?(Reference.names(), &(Reference.decode(&1, json) == expected))
  end

  test "the references decode what RustyJson encodes, in every escape mode and pretty" do
    prop =
      :proper.forall(:proper_types.sized(&json_term/1), fn generated ->
        term = build(generated)

        Enum.all?(
          [
            [],
            [escape: :unicode_safe],
            [escape: :html_safe],
            [escape: :javascript_safe],
            [pretty: true]
          ],
          &roundtrips?(term, &1)
        )
      end)

    assert :proper.quickcheck(prop, [{:numtests, 300}, {:max_size, 24}, :quiet]) == true
  end

  test "unicode_safe output is pure ASCII" do
    prop =
      :proper.forall(:proper_unicode.utf8(), fn s ->
        json = RustyJson.encode!(s, escape: :unicode_safe)

        json == for(<<b <- json>>, b < 0x80, into: "", do: <<b>>) and
          Enum.all?(Reference.names(), &(Reference.decode(&1, json) == {:ok, s}))
      end)

    assert :proper.quickcheck(prop, [{:numtests, 500}, :quiet]) == true
  end
end
