defmodule RustyJson.Fragment do
  @moduledoc """
  Already-encoded JSON inserted as is into the output (like `Jason.Fragment`).

  As in Jason, `encode` is a function of the encoder options returning iodata: code that calls
  `fragment.encode.(opts)` works on fragments made by either library. A fragment made by `new/1` from iodata also
  keeps that iodata in `iodata`, which the encoder writes directly, without calling back into Elixir. A fragment
  built by hand (`%RustyJson.Fragment{encode: fun}`) leaves `iodata` nil and the function is called; if you
  replace `encode` in a fragment from `new/1`, set `iodata` to nil too.
  """
  @type t :: %__MODULE__{encode: (term() -> iodata()), iodata: iodata() | nil}
  defstruct [:encode, :iodata]

  @doc """
  Wraps already-encoded JSON (iodata, or a function of the encoder options returning iodata).

  The content is not checked: it must be valid JSON.

      iex> RustyJson.encode!(%{"a" => RustyJson.Fragment.new(~s([1, 2]))})
      ~s({"a":[1, 2]})
      iex> RustyJson.Fragment.new("[1]").encode.([])
      "[1]"
  """
  @spec new(iodata() | (term() -> iodata())) :: t()
  def new(encode) when is_function(encode, 1), do: %__MODULE__{encode: encode}

  def new(iodata) when is_binary(iodata) or is_list(iodata),
    do: %__MODULE__{encode: fn _opts -> iodata end, iodata: iodata}

  @doc """
  Wraps already-encoded JSON after checking it (as RustyJson 0.3 does): iodata that is not one valid JSON
  document raises `RustyJson.DecodeError` with the position `RustyJson.decode/1` reports. The check builds no
  term (the document is walked as `RustyJson.get/3` walks it).

      iex> RustyJson.encode!([RustyJson.Fragment.new!(~s({"a": 1}))])
      ~s([{"a": 1}])
      iex> RustyJson.Fragment.new!(~s({"a": }))
      ** (RustyJson.DecodeError) unexpected byte at position 6: 0x7D ("}")
  """
  @spec new!(iodata()) :: t()
  def new!(iodata) when is_binary(iodata) or is_list(iodata) do
    case RustyJson.Get.validate(IO.iodata_to_binary(iodata)) do
      :ok -> new(iodata)
      {:error, error} -> raise error
    end
  end
end
