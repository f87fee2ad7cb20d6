defmodule RustyJson.EncodeError do
  @moduledoc """
  Raised (or returned) when a term cannot be encoded: invalid UTF-8 in a string, or duplicate keys with
  `maps: :strict`. Same fields and messages as `Jason.EncodeError`.

  Also for an output that would pass its ceiling (`max_output_bytes:`) or that memory cannot hold: the message
  names the size, and nothing of that size was allocated (`RustyJson.Formatter` raises it too).
  """
  @type t :: %__MODULE__{message: String.t()}
  defexception [:message]

  @doc """
  The error for an encoder failure, as `Jason.EncodeError.new/1`: `{:duplicate_key, key}` (two keys of one map that
  convert to the same string, with `maps: :strict`; the encoder passes the key as written in the call's escape
  mode, without quotes, so `"<"` with `escape: :html_safe` is `\\u003C`) or `{:invalid_byte, byte, original}`
  (invalid UTF-8 in `original`).

      iex> RustyJson.EncodeError.new({:duplicate_key, :a})
      %RustyJson.EncodeError{message: "duplicate key: a"}
      iex> RustyJson.EncodeError.new({:invalid_byte, 0xFF, <<0xFF>>})
      %RustyJson.EncodeError{message: "invalid byte 0xFF in <<255>>"}
      iex> RustyJson.EncodeError.new({:output_limit, 2048, 1024}).message
      "the output would take 2048 bytes, more than the max_output_bytes limit of 1024 bytes"
  """
  @spec new(
          {:duplicate_key, String.Chars.t()}
          | {:invalid_byte, byte(), binary()}
          | {:output_limit, pos_integer(), pos_integer()}
          | {:out_of_memory, pos_integer()}
        ) :: t()
  def new({:duplicate_key, key}), do: %__MODULE__{message: "duplicate key: " <> to_string(key)}

  def new({:output_limit, needed, limit}) do
    %__MODULE__{
      message:
        "the output would take #{needed} bytes, more than the max_output_bytes limit of #{limit} bytes"
    }
  end

  def new({:out_of_memory, needed}) do
    %__MODULE__{
      message: "out of memory: the output needs #{needed} bytes, which could not be allocated"
    }
  end

  def new({:invalid_byte, byte, original}) do
    %__MODULE__{
      message: "invalid byte 0x" <> Integer.to_string(byte, 16) <> " in " <> inspect(original)
    }
  end
end

defmodule RustyJson.DecodeError do
  @moduledoc """
  Returned by `RustyJson.decode/2` (raised by `decode!/2`) for input that is not valid JSON.

  `position` is the byte offset of the problem, `token` the offending token when there is one, and `data` the input.
  The message is Jason's, word for word.

  Raised by `RustyJson.Stream` too, with two more fields (nil otherwise, so the struct matches as Jason's does):
  `position` is then the absolute byte offset in the stream, `line` its line (1-based, counting `\n`), `data` the
  item (the bytes of the failing value, or the offending byte, or `""` at the end of the stream) and `offset` where
  `data` starts in the stream. The message names the line: `unexpected byte at position 27 (line 3): 0x7D ("}")`.

  An input longer than a `max_bytes:` limit (RustyJson 0.3's option) is an error with `limit` set, `position` the
  first byte past it and `data` nil (the input is not flattened to be reported):
  `input longer than the max_bytes limit of 6 bytes`. In a stream, the limit holds for each document or item,
  and `position` (and `offset`) is where the one too long starts: `the value at position 120 is longer than the
  max_bytes limit of 64 bytes`; it holds for each token of the envelope around `decode_array/2`'s array at a path too;
  an envelope kept with `envelope: true` longer than it fails at 0.
  """
  @type t :: %__MODULE__{
          position: non_neg_integer(),
          token: String.t() | nil,
          data: String.t() | nil,
          line: pos_integer() | nil,
          offset: non_neg_integer() | nil,
          limit: pos_integer() | nil,
          memory: pos_integer() | nil,
          max_term_bytes: pos_integer() | nil
        }
  defexception [
    :position,
    :token,
    :data,
    line: nil,
    offset: nil,
    limit: nil,
    memory: nil,
    max_term_bytes: nil
  ]

  @impl true
  def message(%{max_term_bytes: max} = error) when is_integer(max) do
    "decoding would take more than the max_term_bytes ceiling of #{max} bytes for its term and its " <>
      "stack of open containers (the container at #{where(error)} passed it)"
  end

  def message(%{memory: memory} = error) when is_integer(memory) do
    "out of memory at #{where(error)}: decoding needed #{memory} bytes of working memory (its stacks of " <>
      "open containers and pending values), which could not be allocated"
  end

  def message(%{limit: limit, offset: nil}) when is_integer(limit) do
    "input longer than the max_bytes limit of #{limit} bytes"
  end

  def message(%{limit: limit} = error) when is_integer(limit) do
    "the value at #{where(error)} is longer than the max_bytes limit of #{limit} bytes"
  end

  def message(%{token: token} = error) when is_binary(token) do
    "unexpected sequence at #{where(error)}: #{inspect(token)}"
  end

  def message(%{position: position, data: data} = error) do
    at = position - (error.offset || 0)

    if at == byte_size(data) do
      "unexpected end of input at #{where(error)}"
    else
      byte = :binary.at(data, at)
      str = <<byte>>

      if String.printable?(str) do
        "unexpected byte at #{where(error)}: " <>
          "#{inspect(byte, base: :hex)} (#{inspect(str)})"
      else
        "unexpected byte at #{where(error)}: " <>
          "#{inspect(byte, base: :hex)}"
      end
    end
  end

  defp where(%{position: position, line: nil}), do: "position #{position}"
  defp where(%{position: position, line: line}), do: "position #{position} (line #{line})"
end

defmodule RustyJson.PathError do
  @moduledoc """
  Returned by `RustyJson.get/3` (raised by `get!/3`) when a valid document holds no value at a JSON Pointer, and
  raised by `RustyJson.Stream.decode_array/2` with `at:` when the stream holds no array there.

  `pointer` is the pointer as given; `reason` is `:missing` (no value there: a key the object lacks, an index past
  the array's end, or a path going through a string, number, `true`, `false` or `null`) or `:not_an_array`
  (`decode_array/2`: the value there is not an array).

      iex> RustyJson.get(~s({"a": {"b": 1}}), "/a/c")
      {:error, %RustyJson.PathError{pointer: "/a/c", reason: :missing}}
      iex> Exception.message(%RustyJson.PathError{pointer: "/data", reason: :not_an_array})
      "the value at the JSON Pointer \\"/data\\" is not an array"
  """
  @type t :: %__MODULE__{pointer: String.t(), reason: :missing | :not_an_array}
  defexception [:pointer, :reason]

  @impl true
  def message(%{pointer: pointer, reason: :missing}),
    do: "no value at the JSON Pointer #{inspect(pointer)}"

  def message(%{pointer: pointer, reason: :not_an_array}),
    do: "the value at the JSON Pointer #{inspect(pointer)} is not an array"
end
