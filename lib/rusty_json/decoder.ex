defmodule RustyJson.Decoder do
  @moduledoc """
  `parse/2`, as RustyJson 0.3 (and Jason, as `Jason.Decoder.parse/2`) have it: `RustyJson.decode/2` under another
  name, for code written against them.
  """

  @doc """
  Decodes JSON `input` with the options of `RustyJson.decode/2`; the same result.

      iex> RustyJson.Decoder.parse(~s({"a": [1]}), keys: :atoms)
      {:ok, %{a: [1]}}
  """
  @spec parse(iodata(), keyword() | map()) :: {:ok, term()} | {:error, RustyJson.DecodeError.t()}
  def parse(input, opts \\ []), do: RustyJson.decode(input, opts)
end
