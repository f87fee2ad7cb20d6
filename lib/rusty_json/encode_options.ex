defmodule RustyJson.EncodeOptions do
  @moduledoc false
  # Turns encode options (a keyword list, as Jason's) into the compact term the NIF reads:
  # `{escape, strict?, pretty}` where pretty is nil or `{indent, line_separator, after_colon}` binaries.
  # `max_output_bytes:` (or its `config :rusty_json` key) makes it `{escape, strict?, pretty, flags, max}`, the
  # output's ceiling in bytes, which the NIF reads too (without it, the NIF's default: `max_output_bytes/0`).
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
          | {atom(), boolean(), pretty(), flags(), pos_integer()}
          | {atom(), boolean(), pretty(), flags(), pos_integer(), compression()}

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

  # The NIF's own ceiling on an output (`rustyjson_core::overflow::DEFAULT_MAX_OUTPUT`), and the configured one.
  @native_max_output 1 <<< 30
  @max_output Application.compile_env(:rusty_json, :max_output_bytes, @native_max_output)

  @default (cond do
              @max_output != @native_max_output ->
                {:json, false, nil, @tuples_and_uris && @tuples, @max_output}

              @tuples_and_uris ->
                {:json, false, nil, @tuples}

              true ->
                {:json, false, nil}
            end)
  @form "; expected a keyword list or a map of options"
  @pretty_keys "expected :indent, :line_separator, :after_colon or :record_separator with iodata"

  @doc "The options of a call without options."
  defmacro default, do: Macro.escape(@default)

  @doc """
  The ceiling of an output in bytes when a call does not set `max_output_bytes:`: `config :rusty_json,
  max_output_bytes: n`, or 1 GiB.
  """
  @spec max_output_bytes() :: pos_integer()
  def max_output_bytes, do: @max_output

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

      {:max_output_bytes, max}, acc ->
        max_output(acc, max_output!(max))

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

  defp compact?({escape, strict, pretty, sort, max}) when is_integer(max) and max > 0,
    do: compact?({escape, strict, pretty, sort})

  defp compact?({escape, strict, pretty, sort, max, {:gzip, level}}) when level in 0..9,
    do: compact?({escape, strict, pretty, sort, max}) and is_integer(max)

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

  def compact({escape, strict, _pretty, sort, max}) when is_integer(max),
    do: {escape, strict, nil, sort, max}

  def compact({escape, strict, _pretty, sort, _compress}), do: {escape, strict, nil, sort}

  def compact({escape, strict, _pretty, sort, max, _compress}),
    do: {escape, strict, nil, sort, max}

  @doc "The output's ceiling in bytes these options set (`max_output_bytes/0` when they set none)."
  @spec max_output(t()) :: pos_integer()
  def max_output({_, _, _, _, max}) when is_integer(max), do: max
  def max_output({_, _, _, _, max, _}), do: max
  def max_output(_opts), do: @native_max_output

  @doc "The options without their `compress:` element (what the NIF reads), and the compression (or nil)."
  @spec split_compression(t()) :: {t(), compression() | nil}
  def split_compression({e, s, p, f, {:gzip, _} = gzip}), do: {{e, s, p, f}, gzip}
  def split_compression({e, s, p, f, max, {:gzip, _} = gzip}), do: {{e, s, p, f, max}, gzip}
  def split_compression(opts), do: {opts, nil}

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

  defp compress(acc, gzip) do
    case split_compression(acc) do
      {opts, _} when gzip == nil -> opts
      {{e, s, p}, _} -> {e, s, p, false, gzip}
      {opts, _} -> :erlang.append_element(opts, gzip)
    end
  end

  # The ceiling goes fifth, before a compression (which `RustyJson.Encode.run/2` takes off before the NIF call).
  defp max_output(acc, max) do
    case split_compression(acc) do
      {{e, s, p}, gzip} -> with_compression({e, s, p, false, max}, gzip)
      {{e, s, p, f}, gzip} -> with_compression({e, s, p, f, max}, gzip)
      {{e, s, p, f, _}, gzip} -> with_compression({e, s, p, f, max}, gzip)
    end
  end

  defp with_compression(opts, nil), do: opts
  defp with_compression(opts, gzip), do: :erlang.append_element(opts, gzip)

  @doc false
  # `max_output_bytes:` of `encode/2` and `RustyJson.Formatter`: a positive integer.
  @spec max_output!(term()) :: pos_integer()
  def max_output!(max) when is_integer(max) and max > 0, do: max

  def max_output!(other) do
    raise ArgumentError,
          "invalid value for the :max_output_bytes option: #{inspect(other)}; expected a positive integer"
  end

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
  defp pretty!(spaces) when is_integer(spaces) and spaces >= 0,
    do: {layout!(:indent, spaces), "\n", " "}

  defp pretty!(indent) when is_binary(indent), do: {layout!(:indent, indent), "\n", " "}

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

  # The longest layout string: the ceiling on outputs, which an output holding one such string would pass (a
  # number of spaces is checked before it is made: `pretty: 10_000_000_000` would copy 10 GB).
  @max_layout_bytes @max_output

  @doc false
  # A layout string of `pretty:` or `RustyJson.Formatter` (`:indent`, `:line_separator`, `:after_colon`) as a
  # binary: iodata of JSON whitespace only (anything else would make the output something other than JSON), or a
  # number of spaces (RustyJson 0.3's `pretty: 4`, `indent: 4`), at most the configured ceiling on outputs. Raises
  # `ArgumentError` saying which and why.
  @spec layout!(atom(), term()) :: binary()
  def layout!(:indent, spaces)
      when is_integer(spaces) and spaces >= 0 and spaces <= @max_layout_bytes,
      do: :binary.copy(" ", spaces)

  def layout!(:indent, spaces) when is_integer(spaces) and spaces > @max_layout_bytes,
    do:
      layout_error!(
        :indent,
        spaces,
        "at most #{@max_layout_bytes} spaces (the ceiling on outputs, max_output_bytes: #{@max_layout_bytes} bytes)"
      )

  # Between top-level values, where JSON text sequences put `"\x1E"`: any iodata.
  def layout!(:record_separator, value) do
    case iodata_to_binary(value) do
      {:ok, binary} -> binary
      :error -> layout_error!(:record_separator, value, "iodata")
    end
  end

  def layout!(key, value) when is_binary(value) or is_list(value) do
    case iodata_to_binary(value) do
      {:ok, binary} when byte_size(binary) > @max_layout_bytes ->
        layout_error!(key, value, "at most #{@max_layout_bytes} bytes")

      {:ok, binary} ->
        if whitespace?(binary),
          do: binary,
          else: layout_error!(key, value, "JSON whitespace only (spaces, tabs, \\n, \\r)")

      :error ->
        layout_error!(key, value, "iodata")
    end
  end

  def layout!(:indent, value), do: layout_error!(:indent, value, "iodata or a number of spaces")
  def layout!(key, value), do: layout_error!(key, value, "iodata")

  defp iodata_to_binary(value) do
    {:ok, IO.iodata_to_binary(value)}
  rescue
    ArgumentError -> :error
  end

  defp whitespace?(<<c, rest::binary>>) when c in [?\s, ?\t, ?\n, ?\r], do: whitespace?(rest)
  defp whitespace?(<<>>), do: true
  defp whitespace?(_other), do: false

  defp layout_error!(key, value, expected) do
    raise ArgumentError,
          "invalid value for the pretty option #{inspect(key)}: #{inspect(value, limit: 5, printable_limit: 40)}; " <>
            "expected #{expected}"
  end
end
