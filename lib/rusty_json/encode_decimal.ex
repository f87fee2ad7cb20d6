defmodule RustyJson.EncodeDecimal do
  @moduledoc false
  # A Decimal is written as Jason writes it: the string `Decimal.to_string(d, :normal)`. That form spells the
  # exponent out in zeros: `1e2000000000` (12 bytes of JSON, decoded with `floats: :decimals`) would be a
  # 2,000,000,000-digit string. So the zeros it adds to the coefficient's digits are limited to `max_zeros/0`:
  # past that, the encode fails with an EncodeError naming the limit, or with `large_decimals: :object` the
  # Decimal is RustyJson 0.3.10's `{"coef":..,"exp":..,"sign":..}`. The check reads the fields only, before
  # Decimal is called, so its cost never follows the exponent's value.

  alias RustyJson.{EncodeError, OrderedObject}

  # Every double written out in full needs at most 323 zeros (5.0e-324 is `0.` and 323 zeros before its 5; 1.0e308
  # is 1 and 308 zeros), and RustyJson 0.3.10 wrote exponents up to ±1024 in this form: 1024 keeps all of them.
  @max_zeros 1024

  # Zero counts beyond this are not printed in the message (a bignum exponent's digits could be megabytes).
  @printed_max 10 ** 18

  @doc "The most zeros a Decimal's written form may add to its coefficient's digits."
  @spec max_zeros() :: pos_integer()
  def max_zeros, do: @max_zeros

  @doc """
  `:normal` when `Decimal.to_string(decimal, :normal)` adds at most `max_zeros/0` zeros to the coefficient's digits
  (special values and malformed structs too: Decimal handles or refuses them), else `{:too_long, zeros}`.
  """
  @spec form(struct()) :: :normal | {:too_long, pos_integer()}
  def form(decimal) do
    case zeros(decimal) do
      zeros when zeros > @max_zeros -> {:too_long, zeros}
      _ -> :normal
    end
  end

  # `:normal` writes the coefficient's digits then `exp` zeros for exp >= 0; for a negative one, a point inside the
  # digits, or `0.` and `-exp - digits` zeros before them. The digits are counted only where that can pass the
  # limit (their count is the coefficient's size, which the caller's term already holds).
  defp zeros(%{coef: coef, exp: exp}) when is_integer(coef) and is_integer(exp) and exp >= 0,
    do: exp

  defp zeros(%{coef: coef, exp: exp})
       when is_integer(coef) and is_integer(exp) and exp < -@max_zeros,
       do: -exp - byte_size(Integer.to_string(abs(coef)))

  defp zeros(_decimal), do: 0

  @doc "RustyJson 0.3.10's form of a Decimal it did not write in full: its fields as an object."
  @spec object(struct()) :: OrderedObject.t()
  def object(%{coef: coef, exp: exp, sign: sign}),
    do: %OrderedObject{values: [{"coef", coef}, {"exp", exp}, {"sign", sign}]}

  @doc "The error for a Decimal whose written form would add `zeros` zeros, past the limit."
  @spec error(struct(), pos_integer()) :: EncodeError.t()
  def error(%{exp: exp}, zeros) do
    %EncodeError{
      message:
        "cannot encode a Decimal with exponent #{printed(exp)}: its :normal form (as Jason writes it) " <>
          "would add #{printed(zeros)} zeros to its digits, over the limit of #{@max_zeros} zeros; " <>
          "the option large_decimals: :object writes such decimals as {\"coef\":..,\"exp\":..,\"sign\":..}"
    }
  end

  defp printed(n) when abs(n) <= @printed_max, do: Integer.to_string(n)
  defp printed(n) when n > 0, do: "over 10^18"
  defp printed(_n), do: "under -10^18"
end
