defmodule RustyJson.EncodeCompressTest do
  use ExUnit.Case, async: true

  # `compress: :gzip | {:gzip, level}`: the output is a gzip member that `:zlib.gunzip/1` reads back to exactly
  # what the same encode writes without the option.

  alias RustyJson.Test.{Derived, Envelope, Point}

  defp gunzip!(gz) do
    assert <<0x1F, 0x8B, 8, _::binary>> = gz
    :zlib.gunzip(gz)
  end

  defp big_doc do
    for i <- 1..40_000 do
      %{
        "id" => i,
        "name" => "row #{i} \u00e9\u2028",
        "score" => i / 7,
        "tags" => ["a#{rem(i, 13)}", nil, true]
      }
    end
  end

  test "small documents at every level 0..9 and :gzip round trip" do
    doc = %{"a" => [1, 2.5, nil, "é"], "b" => %{"c" => true}}
    plain = RustyJson.encode!(doc)

    for compress <- [:gzip | Enum.map(0..9, &{:gzip, &1})] do
      assert {:ok, gz} = RustyJson.encode(doc, compress: compress)
      assert gunzip!(gz) == plain
      assert RustyJson.encode!(doc, compress: compress) == gz
      assert {:ok, ^gz} = RustyJson.encode_to_iodata(doc, compress: compress)
      assert RustyJson.encode_to_iodata!(doc, compress: compress) == gz
    end

    assert gunzip!(RustyJson.encode!("", compress: :gzip)) == ~s("")
  end

  test "a multi-MB document (compressed over several slices) round trips at levels 1, 6 and 9" do
    doc = big_doc()
    plain = RustyJson.encode!(doc)
    assert byte_size(plain) > 3_000_000

    for level <- [1, 6, 9] do
      gz = RustyJson.encode!(doc, compress: {:gzip, level})
      assert gunzip!(gz) == plain
      assert byte_size(gz) < div(byte_size(plain), 3)
    end

    # Level 0 stores: bigger than the input, still a valid member.
    stored = RustyJson.encode!(doc, compress: {:gzip, 0})
    assert byte_size(stored) > byte_size(plain)
    assert gunzip!(stored) == plain
  end

  test "incompressible input round trips" do
    noise = :rand.bytes(300_000) |> Base.encode64()
    gz = RustyJson.encode!([noise], compress: {:gzip, 9})
    assert gunzip!(gz) == RustyJson.encode!([noise])
  end

  test "levels trade size: level 9 is no bigger than level 1 on a repetitive document" do
    doc = big_doc()

    assert byte_size(RustyJson.encode!(doc, compress: {:gzip, 9})) <=
             byte_size(RustyJson.encode!(doc, compress: {:gzip, 1}))
  end

  test "the final output is compressed: holes filled in Elixir, pretty, escape modes, sort_keys" do
    doc = %{
      "env" => %Envelope{body: %{y: 1, x: 2}, meta: [1]},
      "point" => %Point{x: 1, y: 2},
      "derived" => %Derived{name: "<n>", age: 3, email: "\u2028"}
    }

    for opts <- [
          [],
          [pretty: true],
          [escape: :html_safe],
          [escape: :unicode_safe, pretty: [indent: "\t"]],
          [escape: :javascript_safe, sort_keys: true],
          [sort_keys: true, pretty: true, maps: :strict]
        ] do
      plain = RustyJson.encode!(doc, opts)
      assert gunzip!(RustyJson.encode!(doc, [compress: :gzip] ++ opts)) == plain
      assert gunzip!(RustyJson.encode!(doc, opts ++ [compress: {:gzip, 1}])) == plain
    end
  end

  test "errors are returned as without the option" do
    assert {:error, %Protocol.UndefinedError{}} = RustyJson.encode(%{a: {1, 2}}, compress: :gzip)
    assert {:error, %RustyJson.EncodeError{}} = RustyJson.encode(<<255>>, compress: :gzip)
  end

  test "compress: nil, false and :none leave the output plain" do
    for none <- [nil, false, :none] do
      assert RustyJson.encode!(%{a: 1}, compress: none) == ~s({"a":1})
    end

    assert RustyJson.encode!(%{a: 1}, compress: :gzip, compress: :none) == ~s({"a":1})

    assert RustyJson.EncodeOptions.new(compress: :none, escape: :html_safe) ==
             {:html_safe, false, nil}
  end

  test "an invalid compress value raises an ArgumentError naming the option" do
    for bad <- [:zstd, {:gzip, 10}, {:gzip, -1}, {:gzip, 6.0}, {:gzip, :best}, true, "gzip"] do
      assert_raise ArgumentError, ~r/:compress option/, fn ->
        RustyJson.encode(%{}, compress: bad)
      end

      assert_raise ArgumentError, ~r/:compress option/, fn ->
        RustyJson.encode!(%{}, compress: bad)
      end
    end
  end
end
