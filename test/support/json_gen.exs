defmodule RustyJson.Test.JsonGen do
  @moduledoc false
  # PropEr generators of JSON-like terms whose cost is bounded by PropEr's size, whatever the depth.
  #
  # A recursive generator whose lists take PropEr's size at every level grows as size^depth: four levels at size
  # 40 gave terms of up to 23,000 scalars, and 400 of them took 62 s to generate on a 2-core machine (a property
  # passed ExUnit's 60 s on a busy one). Here a container of n items gives each item 1/n of its budget, so a term
  # holds at most `size` scalars, and a string at most `size` (and at most 40) codepoints, whatever the
  # depth. (proper_types:resize/2 cannot do this: it bounds the length of the list it wraps, not its items, and
  # does nothing on a union such as frequency/1.)
  #
  # Properties using these pass an explicit {:max_size, n} and {:numtests, n}: their cost is then bounded too.

  alias :proper_types, as: T

  @max_string 40

  @typedoc "A PropEr type (a raw type: a term that may contain types)."
  @type type :: term()

  @doc """
  Runs the PropEr property `prop` `numtests` times with PropEr's size bounded by `max_size`, quietly; true when it
  held. (ExUnit asserts on the result and shows the counterexample.)
  """
  @spec check(term(), pos_integer(), pos_integer()) :: true | {:counterexample, term()}
  def check(prop, numtests, max_size) do
    opts = [
      {:numtests, numtests},
      {:max_size, max_size},
      :quiet,
      {:on_output, fn _, _ -> :ok end}
    ]

    case :proper.quickcheck(prop, opts) do
      true -> true
      _ -> {:counterexample, :proper.counterexample()}
    end
  end

  @doc "A codepoint, mostly printable ASCII, with control characters, the BMP and the astral planes."
  @spec codepoint() :: type()
  def codepoint do
    T.frequency([
      {6, T.range(0x20, 0x7E)},
      {1, T.range(0, 0x1F)},
      {2, T.range(0xA0, 0xD7FF)},
      {1, T.range(0xE000, 0xFFFD)},
      {1, T.range(0x10000, 0x10FFFF)}
    ])
  end

  @doc "A UTF-8 string of at most PropEr's size (and at most #{@max_string}) codepoints."
  @spec string() :: type()
  def string do
    T.bind(
      T.sized(&T.resize(min(&1, @max_string), T.list(codepoint()))),
      &:unicode.characters_to_binary/1,
      false
    )
  end

  @doc "A JSON scalar: nil, a boolean, an integer (small, large, very large), a float or a string."
  @spec scalar() :: type()
  def scalar do
    T.oneof([
      T.exactly(nil),
      T.boolean(),
      T.integer(),
      T.largeint(),
      T.bind(T.integer(), fn n -> n * 1_000_000_000_007 * 1_000_000_000_007 end, false),
      T.float(),
      string()
    ])
  end

  @doc """
  A term of nested lists and string-keyed maps, at most `depth` levels, with at most PropEr's size scalars, each
  of type `leaf` (default `scalar/0`).
  """
  @spec value(non_neg_integer(), type()) :: type()
  def value(depth, leaf \\ scalar()), do: T.sized(&tree(depth, &1, leaf))

  @doc "A list of values of at most `depth` levels, together at most PropEr's size scalars."
  @spec array(non_neg_integer(), type()) :: type()
  def array(depth, leaf \\ scalar()), do: T.sized(&items(&1, fn b -> tree(depth, b, leaf) end))

  # A term of at most `budget` scalars.
  defp tree(depth, budget, leaf) when depth == 0 or budget <= 1, do: leaf

  defp tree(depth, budget, leaf) do
    T.frequency([
      {4, leaf},
      {1, T.lazy(fn -> items(budget, &tree(depth - 1, &1, leaf)) end)},
      {1, T.lazy(fn -> T.bind(items(budget, &pair(depth - 1, &1, leaf)), &Map.new/1, false) end)}
    ])
  end

  defp pair(depth, budget, leaf), do: T.tuple([string(), tree(depth, budget, leaf)])

  # n items (0..budget), each with budget div n: together at most `budget` scalars.
  defp items(budget, item) do
    T.bind(T.range(0, budget), fn n -> T.vector(n, item.(div(budget, max(n, 1)))) end, false)
  end
end
