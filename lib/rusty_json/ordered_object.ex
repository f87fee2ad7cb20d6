defmodule RustyJson.OrderedObject do
  @moduledoc """
  A JSON object that keeps its keys' order (and duplicates), like `Jason.OrderedObject`: `values` is a list of
  `{key, value}` pairs. Encoding writes the pairs in order; `Access` and `Enumerable` work on the pairs (`Access`
  finds the first pair with a key).

      iex> obj = RustyJson.OrderedObject.new(b: 1, a: 2)
      iex> RustyJson.encode!(obj)
      ~s({"b":1,"a":2})
      iex> obj[:a]
      2
  """
  @behaviour Access

  @type t :: %__MODULE__{values: [{String.Chars.t(), term()}]}
  defstruct values: []

  @doc """
  An ordered object of the given `{key, value}` pairs.

      iex> RustyJson.encode!(RustyJson.OrderedObject.new([{"z", 1}, {"a", 2}]))
      ~s({"z":1,"a":2})
  """
  @spec new([{String.Chars.t(), term()}]) :: t()
  def new(values) when is_list(values), do: %__MODULE__{values: values}

  @impl Access
  def fetch(%__MODULE__{values: values}, key) do
    case :lists.keyfind(key, 1, values) do
      {_, value} -> {:ok, value}
      false -> :error
    end
  end

  @impl Access
  def get_and_update(%__MODULE__{values: values} = obj, key, function) do
    {result, values} = get_and_update(values, [], key, function)
    {result, %{obj | values: values}}
  end

  @impl Access
  def pop(%__MODULE__{values: values} = obj, key, default \\ nil) do
    case :lists.keyfind(key, 1, values) do
      {_, value} -> {value, %{obj | values: delete_key(values, key)}}
      false -> {default, obj}
    end
  end

  defp get_and_update([{key, current} | tail], acc, key, fun) do
    case fun.(current) do
      {get, value} -> {get, :lists.reverse(acc, [{key, value} | tail])}
      :pop -> {current, :lists.reverse(acc, tail)}
      other -> raise_bad_return(other)
    end
  end

  defp get_and_update([{_, _} = pair | tail], acc, key, fun),
    do: get_and_update(tail, [pair | acc], key, fun)

  defp get_and_update([], acc, key, fun) do
    # A new key goes first, as in Jason (`put_in/2` of a missing key prepends it).
    case fun.(nil) do
      {get, value} -> {get, [{key, value} | :lists.reverse(acc)]}
      :pop -> {nil, :lists.reverse(acc)}
      other -> raise_bad_return(other)
    end
  end

  defp raise_bad_return(other) do
    raise "the given function must return a two-element tuple or :pop, got: #{inspect(other)}"
  end

  defp delete_key([{key, _} | tail], key), do: delete_key(tail, key)
  defp delete_key([{_, _} = pair | tail], key), do: [pair | delete_key(tail, key)]
  defp delete_key([], _key), do: []
end

defimpl Enumerable, for: RustyJson.OrderedObject do
  def count(%{values: values}), do: {:ok, length(values)}

  def member?(%{values: values}, {key, value}) do
    {:ok,
     case :lists.keyfind(key, 1, values) do
       {_, ^value} -> true
       _ -> false
     end}
  end

  def member?(_obj, _other), do: {:ok, false}

  def slice(_obj), do: {:error, __MODULE__}

  def reduce(%{values: values}, acc, fun), do: Enumerable.List.reduce(values, acc, fun)
end

defimpl RustyJson.Encoder, for: RustyJson.OrderedObject do
  def encode(%{values: values} = object, opts) when is_list(values) and map_size(object) == 2,
    do: RustyJson.Encode.keyword(values, opts)

  def encode(object, _opts), do: raise(RustyJson.Encode.malformed(object))
end
