defmodule RustyJson.EncodeOptions do
  @moduledoc false
  # Turns encode options (a keyword list, as Jason's) into the compact term the NIF reads:
  # `{escape, strict?, pretty}` where pretty is nil or `{indent, line_separator, after_colon}` binaries.
  # A call without options never comes here: it passes `default/0`, a constant.

  @type t :: {atom(), boolean(), nil | {binary(), binary(), binary()}}

  @escapes [:json, :javascript_safe, :html_safe, :unicode_safe]
  # Jason keeps Poison's spellings too.
  @escape_aliases %{javascript: :javascript_safe, unicode: :unicode_safe}

  @default {:json, false, nil}
  @pretty_keys "expected :indent, :line_separator, :after_colon or :record_separator with iodata"

  @doc "The options of a call without options."
  defmacro default, do: Macro.escape(@default)

  @spec new(keyword() | map() | t()) :: t()
  def new(opts) when is_tuple(opts), do: opts
  def new(opts) when is_map(opts), do: new(Map.to_list(opts))

  def new(opts) when is_list(opts) do
    Enum.reduce(opts, @default, fn
      {:escape, escape}, {_, strict, pretty} -> {escape!(escape), strict, pretty}
      {:maps, maps}, {escape, _, pretty} -> {escape, maps!(maps), pretty}
      {:pretty, pretty}, {escape, strict, _} -> {escape, strict, pretty!(pretty)}
      # Jason ignores options it does not know (callers such as Phoenix pass their own).
      {_key, _value}, acc -> acc
      other, _acc -> raise ArgumentError, "invalid encode option: #{inspect(other)}"
    end)
  end

  @doc "The same options without pretty printing (for values encoded inside a protocol implementation)."
  @spec compact(t()) :: t()
  def compact({escape, strict, _pretty}), do: {escape, strict, nil}

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
