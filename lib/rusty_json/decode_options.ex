defmodule RustyJson.DecodeOptions do
  @moduledoc false
  # Turns `RustyJson.decode/2` options into the small integer the NIF reads (bits 0-2 the key mode, bit 3
  # strings: :copy, bit 4 objects: :ordered_objects, bit 5 floats: :decimals), the `keys:` function if any, and
  # whether the caller wants ordered objects. A default call never gets here: it passes the constant 0.

  import Bitwise

  @keys %{strings: 0, atoms: 1, atoms!: 2, copy: 3, intern: 4}
  @strings_copy 1 <<< 3
  @ordered 1 <<< 4
  @decimals 1 <<< 5

  @doc "`{flags, key_fun_or_nil, ordered_objects?}` for the options (the last value of an option wins)."
  @spec parse(Enumerable.t()) :: {non_neg_integer(), (String.t() -> term()) | nil, boolean()}
  def parse(opts)

  # One option, the common case (`keys: :intern`, `keys: :atoms`...): no map built (0.2 µs of a 0.4 µs decode).
  for {mode, bits} <- @keys do
    def parse(keys: unquote(mode)), do: {unquote(bits), nil, false}
  end

  def parse(strings: :reference), do: {0, nil, false}
  def parse(strings: :copy), do: {@strings_copy, nil, false}
  def parse(objects: :maps), do: {0, nil, false}
  def parse(objects: :ordered_objects), do: {@ordered, nil, true}
  def parse(floats: :native), do: {0, nil, false}

  def parse(opts) do
    opts = Map.new(opts)
    ordered = objects(Map.get(opts, :objects, :maps))

    flags =
      strings(Map.get(opts, :strings, :reference)) ||| floats(Map.get(opts, :floats, :native))

    case Map.get(opts, :keys, :strings) do
      fun when is_function(fun, 1) ->
        # The function is applied in Elixir over ordered objects, so it sees every key in document order.
        {flags ||| @ordered, fun, ordered}

      mode ->
        case @keys do
          %{^mode => bits} ->
            {flags ||| bits ||| if(ordered, do: @ordered, else: 0), nil, ordered}

          _ ->
            invalid(
              :keys,
              mode,
              ":strings, :atoms, :atoms!, :copy, :intern or a function of arity 1"
            )
        end
    end
  end

  defp strings(:reference), do: 0
  defp strings(:copy), do: @strings_copy
  defp strings(other), do: invalid(:strings, other, ":reference or :copy")

  defp objects(:maps), do: false
  defp objects(:ordered_objects), do: true
  defp objects(other), do: invalid(:objects, other, ":maps or :ordered_objects")

  defp floats(:native), do: 0

  defp floats(:decimals) do
    if Code.ensure_loaded?(Decimal) do
      @decimals
    else
      raise ArgumentError, "decimal library not found, :decimals option not available"
    end
  end

  defp floats(other), do: invalid(:floats, other, ":native or :decimals")

  defp invalid(option, value, allowed) do
    raise ArgumentError,
          "invalid value for the #{inspect(option)} decode option: #{inspect(value)} " <>
            "(allowed: #{allowed})"
  end
end
