defmodule RustyJson.Formatter do
  @moduledoc """
  Pretty-prints and minimizes JSON text without decoding it, as `Jason.Formatter` (byte-identical output); the work
  is done in the NIF.

  Input is not validated: whitespace outside strings is dropped and nesting follows the brackets. Several
  top-level values may follow each other; containers among them are separated by `:record_separator`.
  """

  alias RustyJson.Native

  @typedoc """
  `:indent` (default `"  "`; iodata, or a number of spaces as RustyJson 0.3 takes it), `:line_separator`
  (`"\\n"`), `:record_separator` (defaults to the line separator) and `:after_colon` (`" "`), each iodata.
  """
  @type opts :: [
          indent: iodata() | non_neg_integer(),
          line_separator: iodata(),
          record_separator: iodata(),
          after_colon: iodata()
        ]

  # Inputs larger than this are formatted on a dirty scheduler; below it, the NIF itself sends outputs of more than
  # about a millisecond's writing there (`:dirty`): the work is the output's, and deep nesting makes long lines.
  @dirty_bytes 64 * 1024

  @doc """
  Pretty-prints JSON iodata.

      iex> RustyJson.Formatter.pretty_print(~s({"a":[1,{}]}))
      ~s({\\n  "a": [\\n    1,\\n    {}\\n  ]\\n})
  """
  @spec pretty_print(iodata(), opts()) :: binary()
  def pretty_print(input, opts \\ []), do: pretty_print_to_iodata(input, opts)

  @doc "Like `pretty_print/2`, returning iodata."
  @spec pretty_print_to_iodata(iodata(), opts()) :: iodata()
  def pretty_print_to_iodata(input, opts \\ []) do
    {indent, line, record, colon} = parse_opts(opts, "  ", "\n", nil, " ")
    format(input, indent, line, record, colon)
  end

  @doc """
  Removes the whitespace of JSON iodata. Takes only `:record_separator` (default `"\\n"`).

      iex> RustyJson.Formatter.minimize(~s({ "a" : [ 1 ] }))
      ~s({"a":[1]})
  """
  @spec minimize(iodata(), keyword()) :: binary()
  def minimize(input, opts \\ []), do: minimize_to_iodata(input, opts)

  @doc "Like `minimize/2`, returning iodata."
  @spec minimize_to_iodata(iodata(), keyword()) :: iodata()
  def minimize_to_iodata(input, opts \\ []) do
    record = opts |> Keyword.get(:record_separator, "\n") |> IO.iodata_to_binary()
    format(input, "", "", record, "")
  end

  @doc false
  # Lays out `input` with the given binaries, on a dirty scheduler when the input or its output is large. Iodata is
  # flattened first by the VM (`IO.iodata_to_binary/1` yields on long lists; the NIF's own flattening would not).
  @spec format(iodata(), binary(), binary(), binary(), binary()) :: binary()
  def format(input, indent, line, record, colon) when is_binary(input) do
    with :dirty <- format_here(input, indent, line, record, colon) do
      Native.format_dirty(input, indent, line, record, colon)
    end
  end

  def format(input, indent, line, record, colon) when is_list(input),
    do: format(IO.iodata_to_binary(input), indent, line, record, colon)

  def format(input, _indent, _line, _record, _colon) do
    raise ArgumentError, "expected iodata, got: #{inspect(input)}"
  end

  defp format_here(input, indent, line, record, colon) do
    if byte_size(input) > @dirty_bytes,
      do: :dirty,
      else: Native.format(input, indent, line, record, colon)
  end

  # RustyJson 0.3's `indent: 4`: a number of spaces.
  defp parse_opts([{:indent, spaces} | opts], _indent, line, record, colon)
       when is_integer(spaces) and spaces >= 0,
       do: parse_opts(opts, RustyJson.EncodeOptions.indent(spaces), line, record, colon)

  defp parse_opts([{option, value} | opts], indent, line, record, colon) do
    value = IO.iodata_to_binary(value)

    case option do
      :indent -> parse_opts(opts, value, line, record, colon)
      :record_separator -> parse_opts(opts, indent, line, value, colon)
      :after_colon -> parse_opts(opts, indent, line, record, value)
      :line_separator -> parse_opts(opts, indent, value, record || value, colon)
      _ -> raise ArgumentError, "unknown option for RustyJson.Formatter: #{inspect(option)}"
    end
  end

  defp parse_opts([], indent, line, record, colon), do: {indent, line, record || line, colon}
end
