defmodule RustyJson.Encoder.Templates do
  @moduledoc false
  # Derived structs' templates in the NIF, held to what `RustyJson.Encoder` dispatches to in the running code.
  #
  # The NIF keeps a template per struct module (registered here on first use, or by the implementation's
  # `@on_load`) and reports, with every result written from templates, which it used: `{module, id}`, the id a
  # hash of the template's contents that the implementation compiled in (`__template__/0`). Before the result is
  # taken, each is checked against the protocol's dispatch now (`impl_for/1`: consolidated or not, derived with
  # other fields, custom, purged); a template that is not the dispatched implementation's is forgotten and the
  # term encoded again. So an encode that starts after a module load returns writes what that code says, whatever
  # other processes registered from older code while it loaded (issue 55: one that read `__template__/0` just
  # before a load and registered it just after kept the old fields for good).
  #
  # erl_nif tells a NIF nothing about loaded code, and the VM's own lookups (found by name) answer neither which
  # version of a module is loaded nor where a consolidated protocol dispatches: the check is made here, once per
  # struct module per encode.

  alias RustyJson.Native

  @doc false
  # The template `__template__/0` of a derived implementation returns: the struct's keys, the written fields in
  # order, their keys as written, and the id of these contents (what the NIF reports and `stale/1` compares).
  @spec template(list(atom()), list(atom()), list(binary())) ::
          {list(atom()), list(atom()), list(binary()), non_neg_integer()}
  def template(all_keys, fields, keys) do
    # 56 bits of an MD5: two templates of one struct that differ share an id with odds of 2^-56, and the id fits a
    # 64-bit word in the NIF (a bignum on 32-bit VMs, which the NIF reads all the same).
    <<id::56, _::72>> = :erlang.md5(:erlang.term_to_binary({all_keys, fields, keys}))
    {all_keys, fields, keys, id}
  end

  @doc false
  # Registers the template of the implementation `struct` dispatches to, when that one is derived: then the NIF
  # writes such structs itself. `{:ok, written fields}` when the NIF can write `struct`.
  @spec register(struct()) :: {:ok, [atom()]} | :error
  def register(%module{} = struct) do
    with {:ok, {all_keys, fields, keys, id}} <- dispatched_template(module),
         :ok <- Native.register_template(module, id, all_keys, fields, keys),
         # A map that is not the struct's shape stays with the protocol (the NIF would leave it again).
         true <-
           map_size(struct) == length(all_keys) and Enum.all?(fields, &is_map_key(struct, &1)) do
      {:ok, fields}
    else
      _ -> :error
    end
  end

  @doc false
  # The `{module, id}` pairs of `used` (templates an encode wrote from) that are not the template of what the
  # protocol dispatches `module` to now; the NIF forgets them (another process may have registered a newer one
  # since: that one stays).
  @spec stale([{module(), non_neg_integer()}]) :: [{module(), non_neg_integer()}]
  def stale(used) do
    case stale(used, []) do
      [] ->
        []

      stale ->
        Native.forget_templates(stale)
        stale
    end
  end

  # (A loop, not `Enum.reject/2`: this runs after every encode that wrote a derived struct.)
  defp stale([], acc), do: acc

  defp stale([{module, id} = used | rest], acc) do
    case dispatched_template(module) do
      {:ok, {_, _, _, ^id}} -> stale(rest, acc)
      _ -> stale(rest, [used | acc])
    end
  end

  # The template of the implementation the protocol dispatches `module`'s structs to, if it is derived.
  defp dispatched_template(module) do
    impl = RustyJson.Encoder.impl_for(%{__struct__: module})

    # `apply/3`: only derived implementations define `__template__/0`, and the type checker (Elixir 1.19+), which
    # does not follow the `function_exported?/3` guard, would flag the call on every other implementation module.
    if function_exported?(impl, :__template__, 0) do
      case apply(impl, :__template__, []) do
        {_, _, _, id} = template when is_integer(id) -> {:ok, template}
        _ -> :error
      end
    else
      :error
    end
  end
end
