defmodule RustyJson.Get do
  @moduledoc false
  # `RustyJson.get/3`: the NIF walks the whole document (validating it, building nothing) to the spans of the
  # values at the pointers; each value is then decoded from its sub-binary with the call's options.

  alias RustyJson.{DecodeError, Native, PathError, Pointer}

  @doc false
  # `{:ok, value}` (or `{:ok, values}` for a list of pointers) or `{:error, exception}`.
  @spec run(iodata(), String.t() | [String.t()], keyword() | map()) ::
          {:ok, term()} | {:error, DecodeError.t() | PathError.t()}
  def run(input, pointers, opts) do
    {default, opts} = take_default(opts)
    parsed = RustyJson.DecodeOptions.parse(opts)

    with :ok <- RustyJson.DecodeOptions.check_size(input, opts) do
      run(input, pointers, parsed, default)
    end
  end

  defp run(input, pointers, parsed, default) do
    input = if is_binary(input), do: aligned(input), else: IO.iodata_to_binary(input)
    many? = is_list(pointers)
    pointers = if many?, do: pointers, else: [pointers]
    tokens = Enum.map(pointers, &Pointer.parse!/1)

    with {:ok, spans} <- locate(input, tokens, parsed),
         {:ok, values} <- values(Enum.zip(pointers, spans), input, parsed, default, []) do
      if many?, do: {:ok, values}, else: {:ok, hd(values)}
    end
  end

  @doc false
  # Whether `input` is one valid JSON document: the walk with no pointer (nothing is built). `RustyJson.Fragment.new!/1`.
  @spec validate(binary()) :: :ok | {:error, DecodeError.t()}
  def validate(input) do
    parsed = RustyJson.DecodeOptions.parse([])

    with {:ok, []} <- locate(aligned(input), [], parsed), do: :ok
  end

  defp locate(input, tokens, {native, _fun, ordered?, duplicates} = _parsed) do
    case Native.locate(input, tokens, native, follows(ordered?, duplicates)) do
      {:ok, spans} ->
        {:ok, spans}

      {:error, {:out_of_memory, position, needed}} ->
        {:error, %DecodeError{position: position, data: input, memory: needed}}

      {:error, {:term_limit, position, max}} ->
        {:error, %DecodeError{position: position, data: input, max_term_bytes: max}}

      {:error, {position, token}} ->
        {:error, %DecodeError{position: position, token: token, data: input}}

      {:error, position} ->
        {:error, %DecodeError{position: position, data: input}}
    end
  end

  # Which of repeated keys a path follows: `decode!/2` then `get_in/2`'s. An ordered object keeps every pair
  # whatever `duplicate_keys:` says (but `:error`), and `Access` fetches the first.
  defp follows(true = _ordered?, :last), do: :first
  defp follows(_ordered?, duplicates), do: duplicates

  defp values([], _input, _parsed, _default, acc), do: {:ok, :lists.reverse(acc)}

  defp values([{pointer, nil} | rest], input, parsed, default, acc) do
    case default do
      {:ok, value} -> values(rest, input, parsed, default, [value | acc])
      :error -> {:error, %PathError{pointer: pointer, reason: :missing}}
    end
  end

  defp values([{_pointer, {start, stop}} | rest], input, parsed, default, acc) do
    case RustyJson.decode_parsed(binary_part(input, start, stop - start), parsed) do
      {:ok, value} ->
        values(rest, input, parsed, default, [value | acc])

      # An option's error inside the value (a repeated key with `duplicate_keys: :error`, say): at its place in
      # the document.
      {:error, %DecodeError{position: at} = error} ->
        {:error, %DecodeError{error | position: start + at, data: input}}
    end
  end

  # A document the NIF walks in more than one call, aligned once if it starts at a bit offset (see
  # `Native.aligned/1`): the walk's slices and each value's decode then read its own bytes.
  defp aligned(input) when byte_size(input) > 65_536, do: Native.aligned(input)
  defp aligned(input), do: input

  # `default:` is get's own option; the rest are decode options.
  defp take_default(opts) when is_map(opts) do
    case Map.fetch(opts, :default) do
      {:ok, value} -> {{:ok, value}, Map.delete(opts, :default)}
      :error -> {:error, opts}
    end
  end

  defp take_default(opts) when is_list(opts) do
    case Keyword.fetch(opts, :default) do
      {:ok, value} -> {{:ok, value}, Keyword.delete(opts, :default)}
      :error -> {:error, opts}
    end
  rescue
    # Not a keyword list: DecodeOptions names the problem.
    _ -> {:error, opts}
  end

  defp take_default(opts), do: {:error, opts}
end
