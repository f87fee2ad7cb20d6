defmodule RustyJson.Formatter do
  @moduledoc """
  Pretty-prints and minimizes JSON text without decoding it, as `Jason.Formatter` (byte-identical output); the work
  is done in the NIF.

  Input is not validated: whitespace outside strings is dropped and nesting follows the brackets. Several
  top-level values may follow each other; containers among them are separated by `:record_separator`.
  """

  alias RustyJson.{EncodeOptions, Native}

  @typedoc """
  `:indent` (default `"  "`; iodata, or a number of spaces as RustyJson 0.3 takes it), `:line_separator`
  (`"\\n"`), `:record_separator` (defaults to the line separator) and `:after_colon` (`" "`), each iodata;
  `:max_output_bytes`, the ceiling of the output (`RustyJson.encode/2`'s option of that name, 1 GiB by default).

  Unlike `Jason.Formatter`, `:indent`, `:line_separator` and `:after_colon` must be JSON whitespace (spaces, tabs,
  `\\n`, `\\r`): anything else would make the output something other than JSON. `:record_separator` may be any
  iodata (JSON text sequences use `"\\x1E"`).
  """
  @type opts :: [
          indent: iodata() | non_neg_integer(),
          line_separator: iodata(),
          record_separator: iodata(),
          after_colon: iodata(),
          max_output_bytes: pos_integer()
        ]

  # Inputs larger than this are formatted on a dirty scheduler; below it, the NIF itself sends outputs of more than
  # about a millisecond's writing there (`:dirty`): the work is the output's, and deep nesting makes long lines.
  @dirty_bytes 64 * 1024

  @doc """
  Pretty-prints JSON iodata. Raises `RustyJson.EncodeError` when the output would pass `:max_output_bytes` (deep
  nesting lays out to an indent per level on every line: 600 KB of brackets would take 720 GB), naming its size.

      iex> RustyJson.Formatter.pretty_print(~s({"a":[1,{}]}))
      ~s({\\n  "a": [\\n    1,\\n    {}\\n  ]\\n})
  """
  @spec pretty_print(iodata(), opts()) :: binary()
  def pretty_print(input, opts \\ []), do: pretty_print_to_iodata(input, opts)

  @doc """
  Like `pretty_print/2`, returning iodata.

      iex> RustyJson.Formatter.pretty_print_to_iodata("[1]") |> IO.iodata_to_binary()
      "[\\n  1\\n]"
  """
  @spec pretty_print_to_iodata(iodata(), opts()) :: iodata()
  def pretty_print_to_iodata(input, opts \\ []) do
    {layout, max} = parse_opts(opts, {"  ", "\n", nil, " "}, EncodeOptions.max_output_bytes())
    layout!(input, layout, max)
  end

  @doc """
  Removes the whitespace of JSON iodata. Takes only `:record_separator` (default `"\\n"`) and
  `:max_output_bytes`.

      iex> RustyJson.Formatter.minimize(~s({ "a" : [ 1 ] }))
      ~s({"a":[1]})
  """
  @spec minimize(iodata(), keyword()) :: binary()
  def minimize(input, opts \\ []), do: minimize_to_iodata(input, opts)

  @doc """
  Like `minimize/2`, returning iodata.

      iex> RustyJson.Formatter.minimize_to_iodata("[ 1, 2 ]") |> IO.iodata_to_binary()
      "[1,2]"
  """
  @spec minimize_to_iodata(iodata(), keyword()) :: iodata()
  def minimize_to_iodata(input, opts \\ []) do
    record = EncodeOptions.layout!(:record_separator, Keyword.get(opts, :record_separator, "\n"))

    max =
      opts
      |> Keyword.get(:max_output_bytes, EncodeOptions.max_output_bytes())
      |> EncodeOptions.max_output!()

    layout!(input, {"", "", record, ""}, max)
  end

  @doc false
  # Lays out `input` with `{indent, line, record, after_colon}` (binaries) in at most `max` bytes, on a dirty
  # scheduler when the input or its output is large: `{:ok, binary}` or `{:error, %RustyJson.EncodeError{}}`.
  # Iodata is flattened first by the VM (`IO.iodata_to_binary/1` yields on long lists; the NIF's would not).
  @spec layout(iodata(), {binary(), binary(), binary(), binary()}, pos_integer()) ::
          {:ok, binary()} | {:error, RustyJson.EncodeError.t()}
  def layout(input, layout, max) when is_binary(input) do
    result =
      with :dirty <- layout_here(input, layout, max) do
        {indent, line, record, colon} = layout
        Native.format_dirty(input, indent, line, record, colon, max)
      end

    case result do
      output when is_binary(output) -> {:ok, output}
      {:error, reason} -> {:error, RustyJson.Encode.exception(reason)}
    end
  end

  def layout(input, layout, max) when is_list(input),
    do: layout(IO.iodata_to_binary(input), layout, max)

  def layout(input, _layout, _max) do
    raise ArgumentError, "expected iodata, got: #{inspect(input)}"
  end

  defp layout!(input, layout, max) do
    case layout(input, layout, max) do
      {:ok, output} -> output
      {:error, error} -> raise error
    end
  end

  defp layout_here(input, {indent, line, record, colon}, max) do
    if byte_size(input) > @dirty_bytes,
      do: :dirty,
      else: Native.format(input, indent, line, record, colon, max)
  end

  defp parse_opts([{:max_output_bytes, max} | opts], layout, _max),
    do: parse_opts(opts, layout, EncodeOptions.max_output!(max))

  defp parse_opts([{option, value} | opts], {indent, line, record, colon}, max) do
    value = EncodeOptions.layout!(option_key(option), value)

    layout =
      case option do
        :indent -> {value, line, record, colon}
        :record_separator -> {indent, line, value, colon}
        :after_colon -> {indent, line, record, value}
        :line_separator -> {indent, value, record || value, colon}
      end

    parse_opts(opts, layout, max)
  end

  defp parse_opts([], {indent, line, record, colon}, max),
    do: {{indent, line, record || line, colon}, max}

  defp option_key(option)
       when option in [:indent, :line_separator, :record_separator, :after_colon],
       do: option

  defp option_key(option),
    do: raise(ArgumentError, "unknown option for RustyJson.Formatter: #{inspect(option)}")
end
