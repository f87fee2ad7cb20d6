defmodule RustyJson.Plain do
  @moduledoc false
  # RustyJson 0.3's ways with terms that have no `RustyJson.Encoder` implementation, as plain terms the encoder
  # then writes: under `protocol: false` every struct is written as a map of its fields (the NIF does that itself,
  # without `__struct__`), and these four as 0.3 wrote them: a MapSet as an array of its elements, a Range as
  # `{"first":..,"last":..}` (with `"step"` when it is not 1), a URI as its string and a Decimal as its digits.

  alias RustyJson.OrderedObject

  @doc "The plain term 0.3 wrote for `struct`."
  @spec term(struct()) :: term()
  def term(%MapSet{} = set), do: MapSet.to_list(set)

  def term(%Range{first: first, last: last, step: 1}),
    do: %OrderedObject{values: [{"first", first}, {"last", last}]}

  def term(%Range{first: first, last: last, step: step}),
    do: %OrderedObject{values: [{"first", first}, {"last", last}, {"step", step}]}

  def term(%URI{} = uri), do: URI.to_string(uri)
  def term(%_{} = struct), do: Map.delete(struct, :__struct__)
end
