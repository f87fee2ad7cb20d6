defmodule RustyJson do
  @moduledoc """
  A fast JSON library for Elixir whose core is a Rust NIF; a drop-in replacement for Jason.

      iex> RustyJson.encode!(%{"name" => "RustyJson", "fast" => true})
      ~s({"fast":true,"name":"RustyJson"})

      iex> RustyJson.decode!(~s({"list":[1,2.5,null]}))
      %{"list" => [1, 2.5, nil]}
  """

  alias RustyJson.{DecodeError, EncodeError, Native}

  @typedoc "A term that can be encoded."
  @type encodable :: term()

  @doc """
  Encodes `input` to a JSON binary. Returns `{:ok, json}` or `{:error, exception}`.
  """
  @spec encode(encodable(), keyword()) ::
          {:ok, String.t()} | {:error, EncodeError.t() | Exception.t()}
  def encode(input, opts \\ []) do
    case Native.encode(input, opts) do
      json when is_binary(json) -> {:ok, json}
      {:error, reason} -> {:error, encode_exception(reason)}
    end
  end

  @doc """
  Encodes `input` to a JSON binary; raises `RustyJson.EncodeError` or `Protocol.UndefinedError` on failure.
  """
  @spec encode!(encodable(), keyword()) :: String.t()
  def encode!(input, opts \\ []) do
    case Native.encode(input, opts) do
      json when is_binary(json) -> json
      {:error, reason} -> raise encode_exception(reason)
    end
  end

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

  defp encode_exception({:invalid_byte, byte, original}),
    do: EncodeError.invalid_byte(byte, original)

  defp encode_exception({:unsupported, value}),
    do: %Protocol.UndefinedError{protocol: RustyJson.Encoder, value: value, description: ""}

  defp decode_exception({position, token}, input),
    do: %DecodeError{position: position, token: token, data: input}

  defp decode_exception(position, input) when is_integer(position),
    do: %DecodeError{position: position, data: input}
end
