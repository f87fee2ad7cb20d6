defmodule RustyJson.DecodeDecimalsTest do
  # `floats: :decimals`: the NIF builds `Decimal.new/1`'s struct for each float token. Jason gives a token with an
  # exponent and no fraction `.0` before the exponent first (`1e400` is `Decimal.new("1.0e400")`), which changes
  # coef and exp, not the value. Decimal is not a dependency here, so the NIF is called with the options integer
  # (bit 5 is floats: :decimals; `RustyJson.decode/2` refuses the option without the library) and the fields are
  # compared. Encoding them back (Jason's `Decimal.to_string(d, :normal)`, bounded) is tested at the end.
  use ExUnit.Case, async: true

  @decimals 32

  defp decimal(sign, coef, exp), do: %{__struct__: Decimal, sign: sign, coef: coef, exp: exp}

  defp decode(token), do: RustyJson.Native.decode(token, @decimals)

  test "an exponent without a fraction: .0 before it, as Jason" do
    assert decode("1e400") == decimal(1, 10, 399)
    assert decode("0e0") == decimal(1, 0, -1)
    assert decode("-0e0") == decimal(-1, 0, -1)
    assert decode("1E5") == decimal(1, 10, 4)
    assert decode("1e+5") == decimal(1, 10, 4)
    assert decode("1E-5") == decimal(1, 10, -6)
    assert decode("-25e3") == decimal(-1, 250, 2)
    assert decode("-7E-2") == decimal(-1, 70, -3)
    assert decode("120e0") == decimal(1, 1200, -1)
  end

  test "tokens with a fraction are Decimal.new/1's parse of them, unchanged" do
    assert decode("1.0e400") == decimal(1, 10, 399)
    assert decode("1.5") == decimal(1, 15, -1)
    assert decode("-0.0") == decimal(-1, 0, -1)
    assert decode("1.50E+2") == decimal(1, 150, 0)
    assert decode("-2.5e-3") == decimal(-1, 25, -4)
    assert decode("0.001E3") == decimal(1, 1, 0)
  end

  test "integers stay integers" do
    assert decode("[10, -0, 0]") == [10, 0, 0]
  end

  test "exponents beyond 64 bits, and large coefficients" do
    big = 10 ** 30
    assert decode("1e#{big}") == decimal(1, 10, big - 1)
    assert decode("-1.25E-#{big}") == decimal(-1, 125, -big - 2)
    assert decode("12345678901234567890e2") == decimal(1, 123_456_789_012_345_678_900, 1)
  end

  test "a huge exponent costs what its digits do, not what it is worth" do
    for {token, coef, exp} <- [
          {"1e2000000000", 10, 1_999_999_999},
          {"-0e99999999999999999999", 0, 99_999_999_999_999_999_998},
          {"5E-2000000000", 50, -2_000_000_001}
        ] do
      decoded = decode(token)
      assert %{coef: ^coef, exp: ^exp} = decoded
      # Nothing spelled out: the struct is its four fields and their (at most two-word) integers.
      assert :erts_debug.flat_size(decoded) < 32
    end
  end

  test "inside containers, and in a stream's items decoded by the NIF" do
    assert decode(~s({"a": [1e2, 2.0]})) == %{"a" => [decimal(1, 10, 1), decimal(1, 20, -1)]}

    splitter = RustyJson.Native.splitter_new(:documents)

    {_spans, values, _open, nil} =
      RustyJson.Native.split_chunk(splitter, "3e1\n-4E0\n5.5\n", @decimals)

    assert values == [decimal(1, 30, 0), decimal(-1, 40, -1), decimal(1, 55, -1)]
  end

  describe "encoding them back: Jason's Decimal.to_string(d, :normal), unless it adds over 1024 zeros" do
    # Decimal is not loaded here: a decimal within the limit goes to `Decimal.to_string/2` (UndefinedFunctionError
    # here; the child VM below has a stand-in that writes Decimal's form), one past it never reaches Decimal.

    defp jason_form_or_undefined(decimal) do
      if Code.ensure_loaded?(Decimal) do
        normal = apply(Decimal, :to_string, [struct(Decimal, Map.from_struct(decimal)), :normal])
        assert RustyJson.encode!(decimal) == ~s("#{normal}")
      else
        assert_raise UndefinedFunctionError, ~r/Decimal.to_string\/2/, fn ->
          RustyJson.encode(decimal)
        end
      end
    end

    test "the issue's repro: 1e2000000000 decoded as a decimal, then encoded, is an error naming the limit" do
      decimal = decode("1e2000000000")
      assert {:error, %RustyJson.EncodeError{message: message}} = RustyJson.encode(decimal)

      assert message ==
               "cannot encode a Decimal with exponent 1999999999: its :normal form (as Jason writes it) " <>
                 "would add 1999999999 zeros to its digits, over the limit of 1024 zeros; the option " <>
                 ~s(large_decimals: :object writes such decimals as {"coef":..,"exp":..,"sign":..})

      assert_raise RustyJson.EncodeError, ~r/over the limit of 1024 zeros/, fn ->
        RustyJson.encode!(%{"a" => [decimal]})
      end
    end

    test "past the limit in every path: nested, pretty, sorted, protocol: false, streams, huge exponents" do
      for token <- [
            "1e100000000",
            "-1E+1026",
            "1e-1100",
            "-0e99999999999999999999",
            "1.5e#{10 ** 30}"
          ],
          opts <- [[], [pretty: true], [sort_keys: true], [protocol: false], [maps: :strict]] do
        assert {:error, %RustyJson.EncodeError{message: message}} =
                 RustyJson.encode(%{"d" => [decode(token)]}, opts)

        assert message =~ "over the limit of 1024 zeros"
        # A bignum exponent is not printed (its digits could be megabytes).
        assert byte_size(message) < 300
      end

      assert_raise RustyJson.EncodeError, fn ->
        [[decode("1e5000")]] |> RustyJson.Stream.encode_lines() |> Enum.to_list()
      end
    end

    test "the limit: 1024 zeros after the digits, or between the point and the digits" do
      # 1024 zeros: Jason's form.
      for {coef, exp} <- [{1, 1024}, {0, 1024}, {1, -1025}, {123, -1027}, {10 ** 3000, -4000}] do
        jason_form_or_undefined(decimal(-1, coef, exp))
      end

      # 1025 zeros: an error.
      for {coef, exp} <- [{1, 1025}, {0, 1025}, {1, -1026}, {123, -1028}, {10 ** 3000, -4026}] do
        assert {:error, %RustyJson.EncodeError{message: message}} =
                 RustyJson.encode(decimal(1, coef, exp))

        assert message =~ "would add 1025 zeros"
      end
    end

    test "large_decimals: :object writes RustyJson 0.3.10's form past the limit (only there)" do
      big = decode("-1.5e#{10 ** 30}")
      object = ~s({"coef":15,"exp":#{10 ** 30 - 1},"sign":-1})

      assert RustyJson.encode([big], large_decimals: :object) == {:ok, "[#{object}]"}
      assert RustyJson.encode!([big], large_decimals: :object, sort_keys: true) == "[#{object}]"

      assert RustyJson.encode!(%{"a" => big}, large_decimals: :object, pretty: true) ==
               ~s({\n  "a": {\n    "coef": 15,\n    "exp": #{10 ** 30 - 1},\n    "sign": -1\n  }\n})

      assert RustyJson.encode!(big, large_decimals: :object, protocol: false) == object
      assert {:error, %RustyJson.EncodeError{}} = RustyJson.encode(big, large_decimals: :error)

      if not Code.ensure_loaded?(Decimal) do
        assert_raise UndefinedFunctionError, fn ->
          RustyJson.encode(decimal(1, 1, 1024), large_decimals: :object)
        end
      end

      assert_raise ArgumentError,
                   ~r/:large_decimals option: :map; expected :error or :object/,
                   fn ->
                     RustyJson.encode(big, large_decimals: :map)
                   end
    end

    test "within the limit the text is Decimal's :normal form, as Jason writes it (a child VM with a stand-in)" do
      code = ~S"""
      defmodule Decimal do
        # Decimal 2's `to_string(d, :normal)`: the digits, then `exp` zeros, or a point placed by `exp`.
        defstruct sign: 1, coef: 0, exp: 0

        def to_string(%Decimal{sign: sign, coef: coef, exp: exp}, :normal) do
          digits = Integer.to_charlist(coef)

          body =
            cond do
              exp >= 0 -> digits ++ List.duplicate(?0, exp)
              length(digits) + exp > 0 -> List.insert_at(digits, length(digits) + exp, ?.)
              true -> ~c"0." ++ List.duplicate(?0, -exp - length(digits)) ++ digits
            end

          IO.iodata_to_binary(if sign == -1, do: [?- | body], else: body)
        end
      end

      results =
        for {sign, coef, exp} <- [{1, 15, -1}, {-1, 1, 1024}, {1, 1, -1025}, {1, 12345, -2}, {1, 1, 1025}] do
          d = struct(Decimal, sign: sign, coef: coef, exp: exp)

          case RustyJson.encode(%{"d" => d}) do
            {:ok, json} -> json == ~s({"d":"#{Decimal.to_string(d, :normal)}"}) and byte_size(json)
            {:error, e} -> e.__struct__
          end
        end

      decoded = RustyJson.decode!("[1e400, 1E-5, 2.50, 1e2000]", floats: :decimals)
      written = RustyJson.encode(Enum.take(decoded, 3))
      IO.write("RESULT " <> inspect({results, written, RustyJson.encode(decoded)}))
      """

      {output, status} = RustyJson.ChildVM.run(code, 120)
      assert status == 0, output
      [_, result] = String.split(output, "RESULT ", parts: 2)

      assert result ==
               inspect(
                 {[11, 1034, 1035, 14, RustyJson.EncodeError],
                  {:ok, ~s(["1#{String.duplicate("0", 400)}","0.000010","2.50"])},
                  {:error, RustyJson.EncodeDecimal.error(%{exp: 1999}, 1999)}}
               )
    end
  end
end
