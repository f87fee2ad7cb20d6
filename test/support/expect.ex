defmodule RustyJson.Test.Expect do
  @moduledoc false
  # Expected JSON built in the running VM's orders: derived structs write `__written__/0`'s fields (the compiling
  # VM's `Map.keys/1` order, see encode_structs.ex), maps their `Map.to_list/1` order.

  alias RustyJson.OrderedObject

  @doc "An object of `{key, json_text}` pairs, in the given order."
  @spec object([{atom() | String.t(), String.t()}]) :: String.t()
  def object(pairs), do: "{" <> Enum.map_join(pairs, ",", fn {k, v} -> ~s("#{k}":#{v}) end) <> "}"

  @doc "The object a derived struct writes, given each written field's JSON text."
  @spec derived(module(), %{atom() => String.t()}) :: String.t()
  def derived(module, json), do: object(pairs(module, json))

  @doc "The derived struct's fields as an ordered object of the given (unencoded) values."
  @spec ordered(module(), map()) :: OrderedObject.t()
  def ordered(module, values), do: OrderedObject.new(pairs(module, values))

  defp pairs(module, values) do
    written = module.__written__()
    # Every written field is given, and nothing else.
    [] = Map.keys(values) -- written
    Enum.map(written, &{&1, Map.fetch!(values, &1)})
  end
end
