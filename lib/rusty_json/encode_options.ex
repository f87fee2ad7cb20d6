defmodule RustyJson.EncodeOptions do
  @moduledoc false
  # Turns encode options (a keyword list, as Jason's) into the compact term the NIF reads:
  # `{escape, strict?, pretty}` where pretty is nil or `{indent, line_separator, after_colon}` binaries.
  # A call without options never comes here: it passes `default/0`, a constant.
  # The options Jason lacks only grow the tuple when given, so calls without them read the same 3-tuple as
  # before: `sort_keys: true` makes it `{escape, strict?, pretty, true}`, and `compress:` adds a fifth element
  # `{:gzip, level}` that `RustyJson.Encode.run/2` takes off before the NIF call (it compresses the final output).

  @type pretty :: nil | {binary(), binary(), binary()}
  @type compression :: {:gzip, 0..9}
  @type t ::
          {atom(), boolean(), pretty()}
          | {atom(), boolean(), pretty(), boolean()}
          | {atom(), boolean(), pretty(), boolean(), compression()}

  @escapes [:json, :javascript_safe, :html_safe, :unicode_safe]
  # Jason keeps Poison's spellings too.
  @escape_aliases %{javascript: :javascript_safe, unicode: :unicode_safe}

  @default {:json, false, nil}
  @form "; expected a keyword list or a map of options"
  @pretty_keys "expected :indent, :line_separator, :after_colon or :record_separator with iodata"

  @doc "The options of a call without options."
  defmacro default, do: Macro.escape(@default)

  @doc """
  The options as the NIF reads them, from a keyword list or a map (as `encode/2` takes them), or from the compact
  tuple itself (what `RustyJson.Encoder` implementations receive and pass on). Raises `ArgumentError` naming a bad
  option or value; a tuple is checked too, so no hand-made one reaches the NIF with values it would refuse.
  """
  @spec new(keyword() | map() | t()) :: t()
  def new(opts) when is_tuple(opts) do
    if compact?(opts), do: opts, else: invalid_options!(opts)
  end

  def new(opts) when is_map(opts), do: new(Map.to_list(opts))

  def new(opts) when is_list(opts) do
    Enum.reduce(opts, @default, fn
      {:escape, escape}, acc -> put_elem(acc, 0, escape!(escape))
      {:maps, maps}, acc -> put_elem(acc, 1, maps!(maps))
      {:pretty, pretty}, acc -> put_elem(acc, 2, pretty!(pretty))
      {:sort_keys, sort}, acc -> sort_keys(acc, sort_keys!(sort))
      {:compress, compress}, acc -> compress(acc, compress!(compress))
      # Jason ignores options it does not know (callers such as Phoenix pass their own).
      {_key, _value}, acc -> acc
      other, _acc -> raise ArgumentError, "invalid encode option: #{inspect(other)}" <> @form
    end)
  end

  def new(other), do: invalid_options!(other)

  defp invalid_options!(opts),
    do: raise(ArgumentError, "invalid encode options: #{inspect(opts)}" <> @form)

  defp compact?({escape, strict, pretty}),
    do: escape in @escapes and is_boolean(strict) and layout?(pretty)

  defp compact?({escape, strict, pretty, sort}),
    do: compact?({escape, strict, pretty}) and is_boolean(sort)

  defp compact?({escape, strict, pretty, sort, {:gzip, level}}) when level in 0..9,
    do: compact?({escape, strict, pretty, sort})

  defp compact?(_other), do: false

  defp layout?(nil), do: true

  defp layout?({indent, line, colon}),
    do: is_binary(indent) and is_binary(line) and is_binary(colon)

  defp layout?(_other), do: false

  @doc """
  The same options without pretty printing nor compression (for values encoded inside a protocol
  implementation, whose output is a part of the whole); `sort_keys` is kept, so their maps are sorted too.
  """
  @spec compact(t()) :: t()
  def compact({escape, strict, _pretty}), do: {escape, strict, nil}
  def compact({escape, strict, _pretty, sort}), do: {escape, strict, nil, sort}
  def compact({escape, strict, _pretty, sort, _compress}), do: {escape, strict, nil, sort}

  @doc "Whether the options ask for object keys in byte order (`sort_keys: true`)."
  @spec sort_keys?(t() | keyword() | map()) :: boolean()
  def sort_keys?(opts) when tuple_size(opts) >= 4, do: elem(opts, 3)
  # An implementation called directly with options as `encode/2` takes them.
  def sort_keys?(opts) when is_list(opts) or is_map(opts), do: sort_keys?(new(opts))
  def sort_keys?(_opts), do: false

  # `sort_keys: false` leaves a tuple without the flag as it is (the NIF then reads what it always read).
  defp sort_keys({_, _, _} = acc, false), do: acc
  defp sort_keys({escape, strict, pretty}, true), do: {escape, strict, pretty, true}
  defp sort_keys(acc, sort), do: put_elem(acc, 3, sort)

  defp sort_keys!(sort) when is_boolean(sort), do: sort

  defp sort_keys!(other) do
    raise ArgumentError,
          "invalid value for the :sort_keys option: #{inspect(other)}; expected a boolean"
  end

  defp compress({_, _, _} = acc, nil), do: acc
  defp compress({escape, strict, pretty}, gzip), do: {escape, strict, pretty, false, gzip}
  defp compress({escape, strict, pretty, sort}, nil), do: {escape, strict, pretty, sort}
  defp compress({escape, strict, pretty, sort}, gzip), do: {escape, strict, pretty, sort, gzip}
  defp compress({escape, strict, pretty, sort, _}, nil), do: {escape, strict, pretty, sort}
  defp compress(acc, gzip), do: put_elem(acc, 4, gzip)

  # `:gzip` is level 6, zlib's default (`Z_DEFAULT_COMPRESSION`, as `:zlib.gzip/1` and flate2's default).
  defp compress!(:gzip), do: {:gzip, 6}
  defp compress!({:gzip, level}) when level in 0..9, do: {:gzip, level}
  defp compress!(none) when none in [nil, false, :none], do: nil

  defp compress!(other) do
    raise ArgumentError,
          "invalid value for the :compress option: #{inspect(other)}; " <>
            "expected :gzip, {:gzip, level} with a level in 0..9, or :none"
  end

  defp escape!(escape) when escape in @escapes, do: escape

  defp escape!(escape) do
    case @escape_aliases do
      %{^escape => mode} ->
        mode

      _ ->
        raise ArgumentError,
              "invalid value for the :escape option: #{inspect(escape)}; " <>
                "expected one of :json, :javascript_safe, :html_safe, :unicode_safe"
    end
  end

  defp maps!(:naive), do: false
  defp maps!(:strict), do: true

  defp maps!(other) do
    raise ArgumentError,
          "invalid value for the :maps option: #{inspect(other)}; expected :naive or :strict"
  end

  defp pretty!(false), do: nil
  defp pretty!(nil), do: nil
  defp pretty!(true), do: {"  ", "\n", " "}

  defp pretty!(opts) when is_list(opts) do
    Enum.reduce(opts, {"  ", "\n", " "}, fn
      {:indent, v}, {_, line, colon} ->
        {layout!(:indent, v), line, colon}

      {:line_separator, v}, {indent, _, colon} ->
        {indent, layout!(:line_separator, v), colon}

      {:after_colon, v}, {indent, line, _} ->
        {indent, line, layout!(:after_colon, v)}

      # Separates several top-level values; one encoded value has none.
      {:record_separator, v}, acc ->
        _ = layout!(:record_separator, v)
        acc

      other, _ ->
        raise ArgumentError, "invalid pretty option: #{inspect(other)}; " <> @pretty_keys
    end)
  end

  defp pretty!(other) do
    raise ArgumentError,
          "invalid value for the :pretty option: #{inspect(other)}; expected a boolean or a keyword " <>
            "list with :indent, :line_separator, :after_colon, :record_separator"
  end

  defp layout!(key, value) do
    IO.iodata_to_binary(value)
  rescue
    ArgumentError ->
      reraise ArgumentError,
              "invalid value for the pretty option #{inspect(key)}: #{inspect(value)}; expected iodata",
              __STACKTRACE__
  end
end
