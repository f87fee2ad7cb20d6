defmodule RustyJson.EncodePropertyTest do
  # PropEr (from apt): any JSON-like term encodes to valid UTF-8 that every reference decoder on this VM (jiffy,
  # OTP's :json; see RustyJson.Reference) decodes back to the term as JSON sees it (atoms and keys as strings).
  use ExUnit.Case, async: true

  alias RustyJson.Reference
  alias RustyJson.Test.JsonGen

  # Terms of at most @max_size scalars (RustyJson.Test.JsonGen) and strings of at most @max_size codepoints: a
  # bounded cost per test, so that the properties take seconds even with the CPU shared.
  @max_size 100

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
      :proper.forall(JsonGen.value(3, leaf()), fn term ->
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

    assert :proper.quickcheck(prop, [{:numtests, 300}, {:max_size, @max_size}, :quiet]) == true
  end

  test "unicode_safe output is pure ASCII" do
    prop =
      :proper.forall(:proper_unicode.utf8(), fn s ->
        json = RustyJson.encode!(s, escape: :unicode_safe)

        json == for(<<b <- json>>, b < 0x80, into: "", do: <<b>>) and
          Enum.all?(Reference.names(), &(Reference.decode(&1, json) == {:ok, s}))
      end)

    assert :proper.quickcheck(prop, [{:numtests, 500}, {:max_size, @max_size}, :quiet]) == true
  end
end
