defmodule RustyJson.Helpers do
  @moduledoc """
  Compile-time helpers for building JSON objects, as `Jason.Helpers`: the keys are checked and escaped when the
  code compiles; the values are evaluated where the helper is called (once: side effects and exceptions happen
  there) and encoded when the result is encoded.

      iex> import RustyJson.Helpers
      iex> RustyJson.encode!(json_map(b: 1, a: [2]))
      ~s({"b":1,"a":[2]})
      iex> RustyJson.encode!(json_map_take(%{a: 1, b: 2, c: 3}, [:c, :a]))
      ~s({"c":3,"a":1})
  """

  alias RustyJson.Encoder.Derive

  @doc """
  An object of the keyword list's pairs in their order (a `RustyJson.Fragment`). Keys must be printable ASCII
  without `\\\\`, `/` or `"` (checked at compile time).

      iex> import RustyJson.Helpers
      iex> RustyJson.encode!(%{user: json_map(name: "Ada", id: 1)})
      ~s({"user":{"name":"Ada","id":1}})
  """
  defmacro json_map(kv) do
    kv = Macro.expand(kv, __CALLER__)

    unless is_list(kv) and
             Enum.all?(kv, &match?({key, _} when is_atom(key) or is_binary(key), &1)),
           do:
             raise(
               ArgumentError,
               "json_map/1 expects a keyword list, got: #{Macro.to_string(kv)}"
             )

    # Evaluated here, in order, once: encoding the fragment twice writes the same values.
    vars = Enum.map(1..length(kv)//1, &Macro.var(:"value#{&1}", __MODULE__))
    values = Enum.map(kv, &elem(&1, 1))
    fragment = kv |> Enum.map(&elem(&1, 0)) |> Enum.zip(vars) |> fragment()

    quote do
      {unquote_splicing(vars)} = {unquote_splicing(values)}
      unquote(fragment)
    end
  end

  @doc """
  An object of `map`'s values for `keys` (a compile-time list), in that order. Raises `ArgumentError` when the map
  lacks one of them.

      iex> import RustyJson.Helpers
      iex> RustyJson.encode!(json_map_take(%{id: 1, name: "Ada", password: "x"}, [:name, :id]))
      ~s({"name":"Ada","id":1})
  """
  defmacro json_map_take(map, keys) do
    keys = Macro.expand(keys, __CALLER__)

    unless is_list(keys) and Enum.all?(keys, &(is_atom(&1) or is_binary(&1))),
      do:
        raise(
          ArgumentError,
          "json_map_take/2 expects a list of keys, got: #{Macro.to_string(keys)}"
        )

    vars = Enum.map(1..length(keys)//1, &Macro.var(:"value#{&1}", __MODULE__))
    pattern = Enum.zip(keys, vars)
    fragment = fragment(pattern)

    quote do
      case unquote(map) do
        %{unquote_splicing(pattern)} ->
          unquote(fragment)

        other ->
          raise ArgumentError,
                "expected a map with keys: #{unquote(inspect(keys))}, got: #{inspect(other)}"
      end
    end
  end

  defp fragment(kv) do
    keys = Enum.map(kv, fn {key, _value} -> Derive.literal_key!(key) end)
    opts = Macro.var(:opts, __MODULE__)
    body = Derive.body(keys, Enum.map(kv, &elem(&1, 1)), opts)

    quote do
      %RustyJson.Fragment{encode: fn unquote(opts) -> unquote(body) end}
    end
  end
end
