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

  @doc """
  Decodes JSON `input` (a binary or iodata). Returns `{:ok, term}` or `{:error, %RustyJson.DecodeError{}}`.
  """
  @spec decode(iodata(), keyword()) :: {:ok, term()} | {:error, DecodeError.t()}
  def decode(input, opts \\ []) do
    input = IO.iodata_to_binary(input)

    case Native.decode(input, opts) do
      {:error, reason} -> {:error, decode_exception(reason, input)}
      term -> {:ok, term}
    end
  end

  @doc """
  Decodes JSON `input` (a binary or iodata); raises `RustyJson.DecodeError` on invalid input.
  """
  @spec decode!(iodata(), keyword()) :: term()
  def decode!(input, opts \\ []) do
    input = IO.iodata_to_binary(input)

    case Native.decode(input, opts) do
      {:error, reason} -> raise decode_exception(reason, input)
      term -> term
    end
  end

  defp decode_exception({position, token}, input),
    do: %DecodeError{position: position, token: token, data: input}

  defp decode_exception(position, input) when is_integer(position),
    do: %DecodeError{position: position, data: input}
end
