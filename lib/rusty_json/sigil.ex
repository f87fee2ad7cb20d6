defmodule RustyJson.Sigil do
  @moduledoc """
  The `~j` and `~J` sigils, as `Jason.Sigil`: `~j` decodes at runtime (interpolation allowed), `~J` at compile
  time. Modifiers: `a` (`keys: :atoms`), `A` (`keys: :atoms!`), `r` (`strings: :reference`), `c`
  (`strings: :copy`).

      iex> import RustyJson.Sigil
      iex> ~J'{"a": [1, null]}'
      %{"a" => [1, nil]}
  """

  @doc """
  Decodes JSON at runtime (`RustyJson.decode!/2`), interpolation allowed.

      iex> import RustyJson.Sigil
      iex> id = 7
      iex> ~j'{"id": \#{id}}'a
      %{id: 7}
  """
  defmacro sigil_j(term, modifiers) do
    quote do
      RustyJson.decode!(unquote(term), unquote(mods_to_opts(modifiers)))
    end
  end

  @doc """
  Decodes JSON at compile time: the term is a literal of the compiled code.

      iex> import RustyJson.Sigil
      iex> ~J'[1, {"a": true}]'
      [1, %{"a" => true}]
  """
  defmacro sigil_J({:<<>>, _meta, [string]}, modifiers) when is_binary(string) do
    string |> RustyJson.decode!(mods_to_opts(modifiers)) |> Macro.escape()
  end

  @doc false
  def mods_to_opts(modifiers) do
    Enum.map(modifiers, fn
      ?a -> {:keys, :atoms}
      ?A -> {:keys, :atoms!}
      ?r -> {:strings, :reference}
      ?c -> {:strings, :copy}
      other -> raise ArgumentError, "unknown sigil modifier #{<<?", other, ?">>}"
    end)
  end
end
