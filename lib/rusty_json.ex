defmodule RustyJson do
  @moduledoc """
  A fast JSON library for Elixir whose core is a Rust NIF; a drop-in replacement for Jason.

      iex> RustyJson.encode!(%{"name" => "RustyJson", "fast" => true})
      ~s({"fast":true,"name":"RustyJson"})

      iex> RustyJson.decode!(~s({"list":[1,2.5,null]}))
      %{"list" => [1, 2.5, nil]}
  """

  alias RustyJson.{DecodeError, EncodeError, Native}
  alias RustyJson.{Encode, EncodeOptions}
  require EncodeOptions

  @typedoc "A term that can be encoded."
  @type encodable :: term()

  @doc """
  Encodes `input` to a JSON binary. Returns `{:ok, json}` or `{:error, exception}`.

  Options (as Jason's):
    * `:escape`: `:json` (default), `:javascript_safe`, `:html_safe` or `:unicode_safe`.
    * `:maps`: `:naive` (default) or `:strict` (two keys converting to the same string are an error).
    * `:pretty`: `true`, or a keyword list with `:indent`, `:line_separator`, `:after_colon`.

  Options Jason lacks:
    * `:sort_keys`: `false` (default) or `true`: every object's keys in byte order of the key string (atom and
      number keys as the strings they are written as, compared before escaping), at every level: nested maps,
      derived structs' fields, and maps that `RustyJson.Encoder` implementations encode with the options they
      get. `RustyJson.OrderedObject` and keyword lists encoded with `RustyJson.Encode.keyword/2` keep their
      order; fragments are written as given. Keys equal as strings (`:a` and `"a"`) are both written, in
      `Map.to_list/1` order (an error with `maps: :strict`).
    * `:compress`: `:none` (default), `:gzip` (level 6, zlib's default) or `{:gzip, level}` with a level in
      0..9: the result is the final output as a gzip binary (`:zlib.gunzip/1` reads it back), compressed in the
      NIF in slices that yield the scheduler.

      iex> RustyJson.encode(%{b: 1, a: %{d: 2, c: 3}}, sort_keys: true)
      {:ok, ~s({"a":{"c":3,"d":2},"b":1})}

      iex> {:ok, gzip} = RustyJson.encode(%{a: 1}, compress: :gzip)
      iex> :zlib.gunzip(gzip)
      ~s({"a":1})
  """
  @spec encode(encodable(), keyword()) ::
          {:ok, String.t()} | {:error, EncodeError.t() | Exception.t()}
  def encode(input, opts \\ [])
  def encode(input, []), do: Encode.run(input, EncodeOptions.default())
  def encode(input, opts), do: Encode.run(input, EncodeOptions.new(opts))

  @doc """
  Encodes `input` to a JSON binary; raises `RustyJson.EncodeError` or `Protocol.UndefinedError` on failure.
  """
  @spec encode!(encodable(), keyword()) :: String.t()
  def encode!(input, opts \\ [])

  def encode!(input, []) do
    case Native.encode(input, EncodeOptions.default()) do
      json when is_binary(json) -> json
      other -> other |> Encode.result(input, EncodeOptions.default()) |> unwrap!()
    end
  end

  def encode!(input, opts), do: input |> Encode.run(EncodeOptions.new(opts)) |> unwrap!()

  defp unwrap!({:ok, json}), do: json
  defp unwrap!({:error, exception}), do: raise(exception)

  @doc """
  Encodes `input` to JSON iodata (a binary). Returns `{:ok, iodata}` or `{:error, exception}`.
  """
  @spec encode_to_iodata(encodable(), keyword()) ::
          {:ok, iodata()} | {:error, EncodeError.t() | Exception.t()}
  def encode_to_iodata(input, opts \\ []), do: encode(input, opts)

  @doc """
  Encodes `input` to JSON iodata (a binary); raises like `encode!/2`.
  """
  @spec encode_to_iodata!(encodable(), keyword()) :: iodata()
  def encode_to_iodata!(input, opts \\ []), do: encode!(input, opts)

  # Inputs of at least this many bytes (about 70 µs of work) are decoded detached from the caller's heap: the
  # NIF builds the result in an environment of its own in ~0.5 ms slices on the caller's scheduler and sends it
  # as `{ref, result}`, so no collection copies a partial result and no dirty scheduler competes with the normal
  # ones for the cores. Smaller inputs are built straight on the caller's heap (one call, no message).
  # Measured in bench/notes/20-decode.md and 40-latency.md.
  @detached_threshold 65_536

  @doc """
  Decodes JSON `input` (a binary or iodata). Returns `{:ok, term}` or `{:error, %RustyJson.DecodeError{}}`.

  Options (as Jason's):
    * `:keys` - `:strings` (default), `:atoms`, `:atoms!` (existing atoms only; raises `ArgumentError`
      otherwise), `:copy`, `:intern` (keys repeated across objects are built once, and objects with the same
      keys share one keys tuple: faster and smaller for arrays of same-shaped objects) or a function of
      arity 1 applied to every key.
    * `:strings` - `:reference` (default; strings without escapes share the input binary) or `:copy`.
    * `:floats` - `:native` (default) or `:decimals` (needs the Decimal library).
    * `:objects` - `:maps` (default) or `:ordered_objects` (`%RustyJson.OrderedObject{}`).
  """
  @spec decode(iodata(), keyword()) :: {:ok, term()} | {:error, DecodeError.t()}
  def decode(input, opts \\ [])

  def decode(input, []) when is_binary(input) do
    case run(input, 0) do
      {:error, reason} -> {:error, decode_exception(reason, input)}
      term -> {:ok, term}
    end
  end

  def decode(input, opts) do
    input = to_binary(input)

    case run_with(input, opts) do
      {:error, reason} -> {:error, decode_exception(reason, input)}
      term -> {:ok, term}
    end
  end

  @doc """
  Decodes JSON `input` (a binary or iodata); raises `RustyJson.DecodeError` on invalid input. Options as in
  `decode/2`.
  """
  @spec decode!(iodata(), keyword()) :: term()
  def decode!(input, opts \\ [])

  def decode!(input, []) when is_binary(input) do
    case run(input, 0) do
      {:error, reason} -> raise decode_exception(reason, input)
      term -> term
    end
  end

  def decode!(input, opts) do
    input = to_binary(input)

    case run_with(input, opts) do
      {:error, reason} -> raise decode_exception(reason, input)
      term -> term
    end
  end

  @compile {:inline, to_binary: 1}
  defp to_binary(input) when is_binary(input), do: input
  defp to_binary(input), do: IO.iodata_to_binary(input)

  defp run(input, flags) when byte_size(input) < @detached_threshold,
    do: Native.decode(input, flags)

  defp run(input, flags) do
    ref = make_ref()

    case Native.decode_detached(input, flags, ref) do
      :ok ->
        receive do
          {^ref, result} -> result
        end

      error ->
        error
    end
  end

  defp run_with(input, []), do: run(input, 0)

  defp run_with(input, opts) do
    case RustyJson.DecodeOptions.parse(opts) do
      {flags, nil, _ordered} ->
        run(input, flags)

      {flags, key_fun, ordered} ->
        case run(input, flags) do
          {:error, _} = error -> error
          term -> apply_keys(term, key_fun, ordered)
        end
    end
  end

  # `keys: fun`: the NIF returned ordered objects; apply the function to every key in document order, then
  # build maps where the first of equal keys wins (as Jason does), unless ordered objects were asked for.
  defp apply_keys(%RustyJson.OrderedObject{values: pairs}, fun, ordered) do
    pairs = Enum.map(pairs, fn {k, v} -> {fun.(k), apply_keys(v, fun, ordered)} end)

    if ordered do
      %RustyJson.OrderedObject{values: pairs}
    else
      pairs |> :lists.reverse() |> :maps.from_list()
    end
  end

  defp apply_keys(list, fun, ordered) when is_list(list),
    do: Enum.map(list, &apply_keys(&1, fun, ordered))

  defp apply_keys(other, _fun, _ordered), do: other

  # `keys: :atoms!` (or `:atoms`) could not make this key an atom: raise what Jason raises (String.to_atom/1
  # and String.to_existing_atom/1 are what it calls), even from decode/2.
  defp decode_exception({:existing_atom, key}, _input) do
    String.to_existing_atom(key)
    raise ArgumentError, "not an already existing atom: #{inspect(key)}"
  end

  defp decode_exception({:atom, key}, _input) do
    _ = String.to_atom(key)
    raise ArgumentError, "could not turn the key #{inspect(key)} into an atom"
  end

  defp decode_exception({position, token}, input),
    do: %DecodeError{position: position, token: token, data: input}

  defp decode_exception(position, input) when is_integer(position),
    do: %DecodeError{position: position, data: input}
end
