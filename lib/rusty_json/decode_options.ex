defmodule RustyJson.DecodeOptions do
  @moduledoc false
  # Turns `RustyJson.decode/2` options into what the NIF reads: a small integer of flags (bits 0-2 the key mode,
  # bit 3 strings: :copy, bit 4 objects: :ordered_objects, bit 5 floats: :decimals, bit 6 duplicate_keys: :last,
  # bit 7 duplicate_keys: :error, bit 8 key positions in ordered pairs), or, when a limit differs from the
  # default, `{flags, integer_digit_limit, max_depth}`. A default call never gets here: it passes `default/0`, a
  # compile-time constant (0 unless the application config sets the digit limit).

  import Bitwise

  @keys %{strings: 0, atoms: 1, atoms!: 2, copy: 3, intern: 4}
  @strings_copy 1 <<< 3
  @ordered 1 <<< 4
  @decimals 1 <<< 5
  @duplicates %{first: 0, last: 1 <<< 6, error: 1 <<< 7}
  @key_positions 1 <<< 8
  @raw_strings 1 <<< 9
  @form "; expected a keyword list or a map of options"

  # Jason's default; `config :rusty_json, decoding_integer_digit_limit: n` changes it (read when RustyJson is
  # compiled, as Jason reads its own: see `RustyJson.decode/2`).
  @jason_digit_limit 1024
  @digit_limit Application.compile_env(
                 :rusty_json,
                 :decoding_integer_digit_limit,
                 @jason_digit_limit
               )

  unless is_integer(@digit_limit) and @digit_limit >= 0 do
    raise ArgumentError,
          "invalid value for the :decoding_integer_digit_limit config of :rusty_json: " <>
            "#{inspect(@digit_limit)} (allowed: a non-negative integer)"
  end

  # The NIF reads limits as 64-bit integers; anything larger is no limit in practice.
  @native_max 1 <<< 62

  # What the NIF reads for the given flags and the default limits (used while compiling this module).
  native =
    if @digit_limit == @jason_digit_limit,
      do: fn flags -> flags end,
      else: fn flags -> {flags, min(@digit_limit, @native_max), :infinity} end

  @doc "What the NIF reads for a call without options."
  @spec default() :: non_neg_integer() | tuple()
  def default, do: unquote(Macro.escape(native.(0)))

  @doc """
  `{native, key_fun_or_nil, ordered_objects?, duplicate_keys}` for the options (the last value of an option
  wins); `native` is what the NIF reads.
  """
  @spec parse(keyword() | map()) ::
          {non_neg_integer() | tuple(), (String.t() -> term()) | nil, boolean(),
           :first | :last | :error}
  def parse(opts)

  # One option, the common case (`keys: :intern`, `keys: :atoms`...): no map built (0.2 µs of a 0.4 µs decode).
  for {mode, bits} <- @keys do
    def parse(keys: unquote(mode)), do: {unquote(Macro.escape(native.(bits))), nil, false, :first}
  end

  def parse(strings: :reference), do: {unquote(Macro.escape(native.(0))), nil, false, :first}

  def parse(strings: :copy),
    do: {unquote(Macro.escape(native.(@strings_copy))), nil, false, :first}

  def parse(objects: :maps), do: {unquote(Macro.escape(native.(0))), nil, false, :first}

  def parse(objects: :ordered_objects),
    do: {unquote(Macro.escape(native.(@ordered))), nil, true, :first}

  def parse(floats: :native), do: {unquote(Macro.escape(native.(0))), nil, false, :first}

  def parse(opts) do
    opts = to_map(opts)
    ordered = objects(Map.get(opts, :objects, :maps))
    duplicates = Map.get(opts, :duplicate_keys, :first)
    duplicate_bits = duplicates(duplicates)

    flags =
      strings(Map.get(opts, :strings, :reference)) ||| floats(Map.get(opts, :floats, :native)) |||
        validate_strings(Map.get(opts, :validate_strings, true))

    limits = {
      digit_limit(Map.get(opts, :decoding_integer_digit_limit, @digit_limit)),
      max_depth(Map.get(opts, :max_depth, :infinity))
    }

    case Map.get(opts, :keys, :strings) do
      fun when is_function(fun, 1) ->
        # The function is applied in Elixir over ordered objects (`RustyJson.DecodeKeys`, in Jason's order); its
        # results are compared there for `duplicate_keys: :error`, with the positions the NIF adds to the pairs.
        positions = if duplicates == :error, do: @key_positions, else: 0
        {with_limits(flags ||| @ordered ||| positions, limits), fun, ordered, duplicates}

      mode ->
        case @keys do
          %{^mode => bits} ->
            flags = flags ||| bits ||| duplicate_bits ||| if(ordered, do: @ordered, else: 0)
            {with_limits(flags, limits), nil, ordered, duplicates}

          _ ->
            invalid(
              :keys,
              mode,
              ":strings, :atoms, :atoms!, :copy, :intern or a function of arity 1"
            )
        end
    end
  end

  defp to_map(opts) when is_map(opts), do: opts

  defp to_map(opts) when is_list(opts) do
    Map.new(opts)
  rescue
    # An element that is not a `{key, value}` pair (or an improper list).
    ArgumentError ->
      case not_pairs(opts) do
        [one] -> raise ArgumentError, "invalid decode option: #{inspect(one)}" <> @form
        _ -> raise ArgumentError, "invalid decode options: #{inspect(opts)}" <> @form
      end
  end

  defp to_map(other),
    do: raise(ArgumentError, "invalid decode options: #{inspect(other)}" <> @form)

  defp not_pairs([{_, _} | rest]), do: not_pairs(rest)
  defp not_pairs([other | rest]), do: [other | not_pairs(rest)]
  defp not_pairs(_end), do: []

  @doc """
  `native` with `keys: :strings` turned into `keys: :intern`: the same keys (equal binaries), shared between
  the objects of one call instead of one per object. For `RustyJson.Stream`, whose items (records of one shape,
  many per call) are where sharing pays most.
  """
  @spec interned_keys(non_neg_integer() | tuple()) :: non_neg_integer() | tuple()
  def interned_keys(flags) when is_integer(flags) and (flags &&& 7) == 0,
    do: flags ||| @keys.intern

  def interned_keys({flags, digits, depth}) when (flags &&& 7) == 0,
    do: {flags ||| @keys.intern, digits, depth}

  def interned_keys(native), do: native

  defp with_limits(flags, {@jason_digit_limit, :infinity}), do: flags
  defp with_limits(flags, {digits, depth}), do: {flags, digits, depth}

  defp strings(:reference), do: 0
  defp strings(:copy), do: @strings_copy
  defp strings(other), do: invalid(:strings, other, ":reference or :copy")

  defp objects(:maps), do: false
  defp objects(:ordered_objects), do: true
  defp objects(other), do: invalid(:objects, other, ":maps or :ordered_objects")

  # RustyJson 0.3's `validate_strings: false`: strings' bytes taken as they are (trusted input).
  defp validate_strings(true), do: 0
  defp validate_strings(false), do: @raw_strings
  defp validate_strings(other), do: invalid(:validate_strings, other, "a boolean")

  @doc """
  The `max_bytes:` limit in decode options (RustyJson 0.3's): nil when none (absent, nil, `:infinity`, or 0 as
  0.3 took it), else the most bytes an input may have. Raises `ArgumentError` for another value.
  """
  @spec max_bytes(keyword() | map()) :: pos_integer() | nil
  def max_bytes(opts) when is_map(opts), do: max_bytes!(Map.get(opts, :max_bytes))
  def max_bytes(opts) when is_list(opts), do: max_bytes!(last_max_bytes(opts, nil))
  def max_bytes(_opts), do: nil

  # The last `max_bytes:` of a keyword list (the last value of an option wins, as `parse/1`'s map).
  defp last_max_bytes([{:max_bytes, value} | rest], _found), do: last_max_bytes(rest, value)
  defp last_max_bytes([_ | rest], found), do: last_max_bytes(rest, found)
  defp last_max_bytes(_end, found), do: found

  defp max_bytes!(none) when none in [nil, :infinity, 0], do: nil
  defp max_bytes!(n) when is_integer(n) and n > 0, do: n

  defp max_bytes!(other),
    do: invalid(:max_bytes, other, "a positive integer, 0 or :infinity (no limit)")

  @doc """
  `:ok`, or the `RustyJson.DecodeError` for `input` (a binary or iodata, measured without being flattened)
  longer than the `max_bytes:` of `opts`.
  """
  @spec check_size(iodata(), keyword() | map()) :: :ok | {:error, RustyJson.DecodeError.t()}
  def check_size(input, opts) do
    case max_bytes(opts) do
      nil -> :ok
      limit -> within(input, limit)
    end
  end

  defp within(input, limit) when is_binary(input) and byte_size(input) <= limit, do: :ok

  defp within(input, limit) when is_list(input) do
    if IO.iodata_length(input) <= limit, do: :ok, else: over(limit)
  end

  defp within(_input, limit), do: over(limit)

  defp over(limit), do: {:error, %RustyJson.DecodeError{position: limit, data: nil, limit: limit}}

  defp floats(:native), do: 0

  defp floats(:decimals) do
    if Code.ensure_loaded?(Decimal) do
      @decimals
    else
      raise ArgumentError, "decimal library not found, :decimals option not available"
    end
  end

  defp floats(other), do: invalid(:floats, other, ":native or :decimals")

  defp duplicates(mode) do
    case @duplicates do
      %{^mode => bits} -> bits
      _ -> invalid(:duplicate_keys, mode, ":first, :last or :error")
    end
  end

  defp digit_limit(n) when is_integer(n) and n >= 0, do: min(n, @native_max)

  defp digit_limit(other),
    do: invalid(:decoding_integer_digit_limit, other, "a non-negative integer")

  defp max_depth(:infinity), do: :infinity
  defp max_depth(n) when is_integer(n) and n >= 0, do: min(n, @native_max)
  defp max_depth(other), do: invalid(:max_depth, other, "a non-negative integer or :infinity")

  defp invalid(option, value, allowed) do
    raise ArgumentError,
          "invalid value for the #{inspect(option)} decode option: #{inspect(value)} " <>
            "(allowed: #{allowed})"
  end
end
