defmodule RustyJson.EncodeOptionsTest do
  # Encode options are a keyword list or a map, as `encode/2` takes them, in every entry point; anything else, and
  # bad values, raise ArgumentError naming them. The compact tuple that encoder implementations receive is checked
  # before it reaches the NIF.
  use ExUnit.Case, async: true

  alias RustyJson.{Encode, EncodeOptions}
  alias RustyJson.Stream, as: JStream

  @form "; expected a keyword list or a map of options"

  defp lines(items, opts),
    do: items |> JStream.encode_lines(opts) |> Enum.map_join(&IO.iodata_to_binary/1)

  defp array(items, opts), do: items |> JStream.encode_array(opts) |> Enum.join()

  test "a map of options, in every entry point" do
    opts = %{escape: :html_safe, sort_keys: true}
    term = %{b: "</", a: 1}
    json = ~S({"a":1,"b":"\u003C\/"})

    assert RustyJson.encode(term, opts) == {:ok, json}
    assert RustyJson.encode!(term, opts) == json
    assert RustyJson.encode_to_iodata(term, opts) == {:ok, json}
    assert RustyJson.encode_to_iodata!(term, opts) == json
    assert IO.iodata_to_binary(Encode.value(term, opts)) == json
    assert IO.iodata_to_binary(Encode.map(term, opts)) == json

    assert lines([term, "<"], opts) == json <> "\n" <> ~S("\u003C") <> "\n"
    assert array([term, term], Map.put(opts, :chunk_bytes, 10)) == "[#{json},#{json}]"
    # `chunk_bytes` read from the map: one chunk per item, then the closing bracket.
    assert [term, term] |> JStream.encode_array(%{chunk_bytes: 10}) |> Enum.count() == 3
    assert [term, term] |> JStream.encode_array(%{}) |> Enum.count() == 1
    assert array([1], %{}) == "[1]"
  end

  test "stream options a stream cannot take are refused in a map too" do
    for {fun, opts} <- [
          {&JStream.encode_lines/2, %{pretty: true}},
          {&JStream.encode_lines/2, %{compress: :gzip}},
          {&JStream.encode_array/2, %{compress: {:gzip, 1}}}
        ] do
      assert_raise ArgumentError, ~r/does not take the :(pretty|compress) option/, fn ->
        fun.([1], opts)
      end
    end

    assert lines([1], %{pretty: false, compress: :none}) == "1\n"
    assert array([%{a: 1}], %{pretty: true}) == ~s([{\n  "a": 1\n}])

    assert_raise ArgumentError, ~r/:chunk_bytes option: 0/, fn ->
      JStream.encode_array([1], %{chunk_bytes: 0})
    end
  end

  test "any other form raises ArgumentError naming it, in every entry point" do
    for {opts, message} <- [
          {{:gzip, 99}, "invalid encode options: {:gzip, 99}"},
          {{:json, false, nil, false, {:gzip, 99}},
           "invalid encode options: {:json, false, nil, false, {:gzip, 99}}"},
          {{:nope, false, nil}, "invalid encode options: {:nope, false, nil}"},
          {{:json, :yes, nil}, "invalid encode options: {:json, :yes, nil}"},
          {{:json, false, {"  ", "\n", 1}},
           ~s(invalid encode options: {:json, false, {"  ", "\\n", 1}})},
          {:pretty, "invalid encode options: :pretty"},
          {"x", ~s(invalid encode options: "x")},
          {[:pretty], "invalid encode option: :pretty"}
        ] do
      message = message <> @form
      assert_raise ArgumentError, message, fn -> RustyJson.encode(%{a: 1}, opts) end
      assert_raise ArgumentError, message, fn -> RustyJson.encode!(%{a: 1}, opts) end
      assert_raise ArgumentError, message, fn -> RustyJson.encode_to_iodata(%{a: 1}, opts) end
      assert_raise ArgumentError, message, fn -> Encode.value(%{a: 1}, opts) end
      assert_raise ArgumentError, message, fn -> JStream.encode_lines([1], opts) end
      assert_raise ArgumentError, message, fn -> JStream.encode_array([1], opts) end
    end
  end

  test "the compact tuples the options make are taken as they are" do
    for opts <- [
          [escape: :html_safe],
          [maps: :strict, pretty: [indent: "\t"]],
          [sort_keys: true],
          [compress: {:gzip, 1}, sort_keys: false],
          [compress: :gzip, pretty: true, sort_keys: true],
          [large_decimals: :object],
          [large_decimals: :object, sort_keys: true, compress: :gzip],
          [large_decimals: :error, protocol: false]
        ] do
      compact = EncodeOptions.new(opts)
      assert EncodeOptions.new(compact) == compact

      assert RustyJson.encode!(%{b: [1], a: "<"}, compact) ==
               RustyJson.encode!(%{b: [1], a: "<"}, opts)
    end
  end
end
