defmodule RustyJson.Fragment do
  @moduledoc """
  Already-encoded JSON inserted as is into the output (like `Jason.Fragment`).

  `encode` is iodata, or a function taking the encoder options and returning iodata.
  """
  @type t :: %__MODULE__{encode: iodata() | (term() -> iodata())}
  defstruct [:encode]

  @doc """
  Wraps already-encoded JSON (iodata, or a function of the encoder options returning iodata).

  The content is not checked: it must be valid JSON.

      iex> RustyJson.encode!(%{"a" => RustyJson.Fragment.new(~s([1, 2]))})
      ~s({"a":[1, 2]})
  """
  @spec new(iodata() | (term() -> iodata())) :: t()
  def new(iodata_or_fun)
      when is_function(iodata_or_fun, 1) or is_binary(iodata_or_fun) or
             is_list(iodata_or_fun) do
    %__MODULE__{encode: iodata_or_fun}
  end
end
