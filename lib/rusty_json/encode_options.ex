defmodule RustyJson.EncodeOptions do
  @moduledoc false
  # Turns encode options (a keyword list, as Jason's) into the compact term the NIF reads:
  # `{escape, strict?, pretty}` where pretty is nil or `{indent, line_separator, after_colon}` binaries.
  # A call without options never comes here: it passes `default/0`, a constant.
  # The options Jason lacks only grow the tuple when given, so calls without them read the same 3-tuple as
  # before: `sort_keys: true` makes it `{escape, strict?, pretty, true}`, and `compress:` adds a fifth element
  # `{:gzip, level}` that `RustyJson.Encode.run/2` takes off before the NIF call (it compresses the final output).

  #
  # The fourth element is `true` for `sort_keys: true` alone (what it always was), or an integer of flags when
  # RustyJson 0.3's ways are asked for: `protocol: false` (structs written as maps of their fields, never through
  # `RustyJson.Encoder`; tuples as arrays), `config :rusty_json, tuples_and_uris: true` (tuples as arrays by
  # default) or `large_decimals: :object` (Decimals too long to write in full as objects of their fields).

  @type pretty :: nil | {binary(), binary(), binary()}
  @type compression :: {:gzip, 0..9}
  @type flags :: boolean() | non_neg_integer()
  @type t ::
          {atom(), boolean(), pretty()}
          | {atom(), boolean(), pretty(), flags()}
          | {atom(), boolean(), pretty(), flags(), compression()}

  import Bitwise

  # The flags' bits (`native/rustyjson_nif/src/encode/options.rs` reads the same).
  @sort 1
  @structs_as_maps 2
  @tuples 4
  # `large_decimals: :object` (read in Elixir only: Decimals are written there).
  @decimal_objects 8
  @all_flags @sort ||| @structs_as_maps ||| @tuples ||| @decimal_objects

  # RustyJson 0.3 wrote tuples as arrays and URIs as strings without being asked; Jason raises for both, and so
  # does RustyJson unless this is set (read at compile time: a call without options stays a constant).
  @tuples_and_uris Application.compile_env(:rusty_json, :tuples_and_uris, false)

  @escapes [:json, :javascript_safe, :html_safe, :unicode_safe]
  # Jason keeps Poison's spellings too.
  @escape_aliases %{javascript: :javascript_safe, unicode: :unicode_safe}

  @default if @tuples_and_uris, do: {:json, false, nil, @tuples}, else: {:json, false, nil}
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
      {:escape, escape}, acc ->
        put_elem(acc, 0, escape!(escape))

      {:maps, maps}, acc ->
        put_elem(acc, 1, maps!(maps))

      {:pretty, pretty}, acc ->
        put_elem(acc, 2, pretty!(pretty))

      {:sort_keys, sort}, acc ->
        set(acc, @sort, sort_keys!(sort))

      {:protocol, protocol}, acc ->
        set(acc, @structs_as_maps ||| @tuples, not protocol!(protocol))

      {:compress, compress}, acc ->
        compress(acc, compress!(compress))

      {:large_decimals, large}, acc ->
        set(acc, @decimal_objects, large_decimals!(large))

      # Jason ignores options it does not know (callers such as Phoenix pass their own), and RustyJson 0.3's
      # `lean:` and `dirty_threshold:` change nothing here.
      {_key, _value}, acc ->
        acc

      other, _acc ->
        raise ArgumentError, "invalid encode option: #{inspect(other)}" <> @form
    end)
  end

  def new(other), do: invalid_options!(other)

  defp invalid_options!(opts),
    do: raise(ArgumentError, "invalid encode options: #{inspect(opts)}" <> @form)

  defp compact?({escape, strict, pretty}),
    do: escape in @escapes and is_boolean(strict) and layout?(pretty)

  defp compact?({escape, strict, pretty, flags}),
    do: compact?({escape, strict, pretty}) and flags?(flags)

  defp compact?({escape, strict, pretty, sort, {:gzip, level}}) when level in 0..9,
    do: compact?({escape, strict, pretty, sort})

  defp compact?(_other), do: false

  defp flags?(flags) when is_boolean(flags), do: true
  defp flags?(flags), do: is_integer(flags) and flags >= 0 and (flags &&& bnot(@all_flags)) == 0

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
  def sort_keys?(opts), do: flag?(opts, @sort)

  @doc "Whether the options ask for structs to be written as maps, never through the protocol (`protocol: false`)."
  @spec structs_as_maps?(t() | keyword() | map()) :: boolean()
  def structs_as_maps?(opts), do: flag?(opts, @structs_as_maps)

  @doc "Whether tuples are written as arrays (`protocol: false`, or `config :rusty_json, tuples_and_uris: true`)."
  @spec tuples?(t() | keyword() | map()) :: boolean()
  def tuples?(opts), do: flag?(opts, @tuples)

  @doc """
  Whether a Decimal too long to write as Jason does is written as RustyJson 0.3.10's `{"coef":..,"exp":..,"sign":..}`
  (`large_decimals: :object`) rather than an error.
  """
  @spec decimal_objects?(t() | keyword() | map()) :: boolean()
  def decimal_objects?(opts), do: flag?(opts, @decimal_objects)

  defp flag?(opts, bit) when tuple_size(opts) >= 4, do: (flags(elem(opts, 3)) &&& bit) != 0
  # An implementation called directly with options as `encode/2` takes them.
  defp flag?(opts, bit) when is_list(opts) or is_map(opts), do: flag?(new(opts), bit)
  defp flag?(_opts, _bit), do: false

  defp flags(true), do: @sort
  defp flags(false), do: 0
  defp flags(flags), do: flags

  # Sets or clears `bit` in the fourth element: `true` for the sort flag alone, as it always was (the NIF then
  # reads what it always read), and no fourth element at all when nothing is set and nothing follows.
  defp set(acc, bit, on?) do
    current = if tuple_size(acc) >= 4, do: flags(elem(acc, 3)), else: 0
    flags = if on?, do: current ||| bit, else: current &&& bnot(bit)

    value =
      case flags do
        @sort -> true
        0 -> false
        flags -> flags
      end

    case {acc, value} do
      {{_, _, _}, false} -> acc
      {{escape, strict, pretty}, value} -> {escape, strict, pretty, value}
      {{escape, strict, pretty, _}, false} -> {escape, strict, pretty}
      _ -> put_elem(acc, 3, value)
    end
  end

  defp protocol!(protocol) when is_boolean(protocol), do: protocol

  defp protocol!(other) do
    raise ArgumentError,
          "invalid value for the :protocol option: #{inspect(other)}; expected a boolean"
  end

  defp large_decimals!(:error), do: false
  defp large_decimals!(:object), do: true

  defp large_decimals!(other) do
    raise ArgumentError,
          "invalid value for the :large_decimals option: #{inspect(other)}; expected :error or :object"
  end

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
  # RustyJson 0.3's forms: the indent alone, as a number of spaces or a string.
  defp pretty!(spaces) when is_integer(spaces) and spaces >= 0, do: {indent(spaces), "\n", " "}
  defp pretty!(indent) when is_binary(indent), do: {indent, "\n", " "}

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
          "invalid value for the :pretty option: #{inspect(other)}; expected a boolean, an indent (a " <>
            "number of spaces or a string) or a keyword list with :indent, :line_separator, :after_colon, " <>
            ":record_separator"
  end

  @doc false
  # An indent given as a number of spaces (RustyJson 0.3's `pretty: 4`, `indent: 4`).
  @spec indent(non_neg_integer()) :: binary()
  def indent(spaces), do: :binary.copy(" ", spaces)

  defp layout!(:indent, spaces) when is_integer(spaces) and spaces >= 0, do: indent(spaces)

  defp layout!(key, value) do
    IO.iodata_to_binary(value)
  rescue
    ArgumentError ->
      reraise ArgumentError,
              "invalid value for the pretty option #{inspect(key)}: #{inspect(value)}; expected iodata",
              __STACKTRACE__
  end
end
