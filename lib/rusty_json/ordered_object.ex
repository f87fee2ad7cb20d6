defmodule RustyJson.OrderedObject do
  @moduledoc """
  A JSON object that keeps its keys' order and duplicates, as decoded with `objects: :ordered_objects`.

      iex> RustyJson.decode!(~s({"b":1,"a":2,"b":3}), objects: :ordered_objects)
      %RustyJson.OrderedObject{values: [{"b", 1}, {"a", 2}, {"b", 3}]}
  """
  @type t :: %__MODULE__{values: [{String.Chars.t(), term()}]}
  defstruct values: []

  @doc "Wraps a list of `{key, value}` pairs."
  @spec new([{String.Chars.t(), term()}]) :: t()
  def new(values) when is_list(values), do: %__MODULE__{values: values}
end
