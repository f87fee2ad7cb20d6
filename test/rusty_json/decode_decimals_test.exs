defmodule RustyJson.DecodeDecimalsTest do
  # `floats: :decimals`: the NIF builds `Decimal.new/1`'s struct for each float token. Jason gives a token with an
  # exponent and no fraction `.0` before the exponent first (`1e400` is `Decimal.new("1.0e400")`), which changes
  # coef and exp, not the value. Decimal is not a dependency here, so the NIF is called with the options integer
  # (bit 5 is floats: :decimals; `RustyJson.decode/2` refuses the option without the library) and the fields are
  # compared.
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

  test "inside containers, and in a stream's items decoded by the NIF" do
    assert decode(~s({"a": [1e2, 2.0]})) == %{"a" => [decimal(1, 10, 1), decimal(1, 20, -1)]}

    splitter = RustyJson.Native.splitter_new(:documents)

    {_spans, values, _open, nil} =
      RustyJson.Native.split_chunk(splitter, "3e1\n-4E0\n5.5\n", @decimals)

    assert values == [decimal(1, 30, 0), decimal(-1, 40, -1), decimal(1, 55, -1)]
  end
end
