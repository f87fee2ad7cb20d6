defmodule RustyJson.Pointer do
  @moduledoc """
  JSON Pointers (RFC 6901), the paths `RustyJson.get/3` and `RustyJson.Stream.decode_array/2`'s `at:` take.

  A pointer is `""` (the whole document) or a sequence of `/`-prefixed reference tokens: `"/data/0/id"`. In a
  token, `~1` stands for `/` and `~0` for `~`; a `~` followed by anything else makes the pointer invalid. A token
  names an object member by its key (any string, the empty one included), or an array item by its index: `0`, or
  digits without a leading zero (`"01"` and `"-"`, the item after the last, name none).

      iex> RustyJson.Pointer.parse("/hits/hits/0/_source")
      {:ok, ["hits", "hits", "0", "_source"]}

      iex> RustyJson.Pointer.parse("/a~1b/m~0n/")
      {:ok, ["a/b", "m~n", ""]}

      iex> RustyJson.Pointer.parse("")
      {:ok, []}

      iex> RustyJson.Pointer.parse("data")
      {:error, "a JSON Pointer is empty or starts with \\"/\\": \\"data\\""}

      iex> RustyJson.Pointer.escape("a/b~c")
      "a~1b~0c"
  """

  @typedoc "A JSON Pointer: `\"\"` or `/`-prefixed reference tokens."
  @type t :: String.t()

  @doc """
  The reference tokens of `pointer`, unescaped: `{:ok, tokens}`, or `{:error, message}` for a pointer that is not
  `""` and does not start with `/`, or that holds a `~` not followed by `0` or `1`.

      iex> RustyJson.Pointer.parse("/data/0/id")
      {:ok, ["data", "0", "id"]}
      iex> RustyJson.Pointer.parse("/a~2")
      {:error, "invalid escape in the JSON Pointer \\"/a~2\\" (~ must be followed by 0 or 1)"}
  """
  @spec parse(t()) :: {:ok, [String.t()]} | {:error, String.t()}
  def parse(""), do: {:ok, []}

  def parse("/" <> rest = pointer) do
    tokens = :binary.split(rest, "/", [:global])

    if Enum.all?(tokens, &valid_token?/1),
      do: {:ok, Enum.map(tokens, &unescape/1)},
      else:
        {:error,
         "invalid escape in the JSON Pointer #{inspect(pointer)} (~ must be followed by 0 or 1)"}
  end

  def parse(pointer) when is_binary(pointer),
    do: {:error, "a JSON Pointer is empty or starts with \"/\": #{inspect(pointer)}"}

  @doc """
  The reference tokens of `pointer`, unescaped; raises `ArgumentError` for an invalid pointer (or one that is not
  a string).

      iex> RustyJson.Pointer.parse!("/meta/total")
      ["meta", "total"]
  """
  @spec parse!(t()) :: [String.t()]
  def parse!(pointer) when is_binary(pointer) do
    case parse(pointer) do
      {:ok, tokens} -> tokens
      {:error, message} -> raise ArgumentError, message
    end
  end

  def parse!(pointer),
    do: raise(ArgumentError, "a JSON Pointer is a string, got: #{inspect(pointer)}")

  @doc """
  `token` escaped for a pointer (`~` as `~0`, `/` as `~1`): `"/users/" <> escape(name)`.

      iex> "/users/" <> RustyJson.Pointer.escape("a/b~c")
      "/users/a~1b~0c"
  """
  @spec escape(String.t()) :: String.t()
  def escape(token) when is_binary(token) do
    token |> String.replace("~", "~0") |> String.replace("/", "~1")
  end

  # Every `~` is followed by `0` or `1`.
  defp valid_token?(token) do
    token
    |> :binary.matches("~")
    |> Enum.all?(fn {at, 1} ->
      binary_part(token, at + 1, min(1, byte_size(token) - at - 1)) in ["0", "1"]
    end)
  end

  # `~1` first, then `~0`: `~01` is `~1`, not `/`.
  defp unescape(token) do
    if String.contains?(token, "~"),
      do: token |> String.replace("~1", "/") |> String.replace("~0", "~"),
      else: token
  end
end
