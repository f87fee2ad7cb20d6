# Structs for the encode tests. A derive without `only:` writes the fields in `Map.keys(struct) -- [:__struct__]`
# order in the VM that compiles the module (as Jason's derive does): OTP 25 lists a small map's atom keys by name,
# OTP 26+ by atom index, which depends on when each atom was created. Such modules here define `__written__/0`:
# that order, taken at compile time from a map of the same atom keys (same keys, same VM, same order).

defmodule RustyJson.Test.Derived do
  @moduledoc false
  @derive RustyJson.Encoder
  defstruct [:name, :age, :email]

  # The written fields in the derive's order (see the top of this file).
  @written Map.keys(Map.new([:name, :age, :email], &{&1, nil}))
  def __written__, do: @written
end

defmodule RustyJson.Test.DerivedOnly do
  @moduledoc false
  @derive {RustyJson.Encoder, only: [:name, :id]}
  defstruct [:id, :name, :secret]
end

defmodule RustyJson.Test.DerivedExcept do
  @moduledoc false
  @derive {RustyJson.Encoder, except: [:secret]}
  defstruct [:id, :name, :secret]

  # The written fields in the derive's order (see the top of this file).
  @written Map.keys(Map.new([:id, :name, :secret], &{&1, nil})) -- [:secret]
  def __written__, do: @written
end

defmodule RustyJson.Test.NoImpl do
  @moduledoc false
  defstruct [:a]
end

defmodule RustyJson.Test.Money do
  @moduledoc false
  defstruct [:amount, :currency]

  defimpl RustyJson.Encoder do
    def encode(%{amount: amount, currency: currency}, opts) do
      RustyJson.Encode.keyword([amount: amount, currency: currency], opts)
    end
  end
end

defmodule RustyJson.Test.Label do
  @moduledoc false
  defstruct [:text]

  defimpl String.Chars do
    def to_string(%{text: text}), do: "label:" <> text
  end
end

defmodule RustyJson.Test.Wide do
  @moduledoc false
  # More than 32 fields: a hash map, so `__struct__` can come anywhere in the NIF's walk.
  @derive {RustyJson.Encoder, only: [:f1]}
  defstruct Enum.map(1..40, &:"f#{&1}") ++ [:A]
end

defmodule RustyJson.Test.Inner do
  @moduledoc false
  @derive RustyJson.Encoder
  defstruct [:x, y: [1, 2]]

  # The written fields in the derive's order (see the top of this file).
  @written Map.keys(Map.new([:x, :y], &{&1, nil}))
  def __written__, do: @written
end

defmodule RustyJson.Test.Middle do
  @moduledoc false
  @derive {RustyJson.Encoder, only: [:inner, :tag]}
  defstruct [:tag, :inner, :hidden]
end

defmodule RustyJson.Test.Outer do
  @moduledoc false
  @derive {RustyJson.Encoder, except: [:skip]}
  defstruct [:middle, :list, :skip, at: nil]

  # The written fields in the derive's order (see the top of this file).
  @written Map.keys(Map.new([:middle, :list, :skip, :at], &{&1, nil})) -- [:skip]
  def __written__, do: @written
end

defmodule RustyJson.Test.Empty do
  @moduledoc false
  @derive {RustyJson.Encoder, only: []}
  defstruct [:a]
end

defmodule RustyJson.Test.Odd do
  @moduledoc false
  # Keys that need no escaping but that `:html_safe` would escape in a map: derived keys are written raw (Jason).
  @derive RustyJson.Encoder
  defstruct [:"a<b", :Z, :_u]

  # The written fields in the derive's order (see the top of this file).
  @written Map.keys(Map.new([:"a<b", :Z, :_u], &{&1, nil}))
  def __written__, do: @written
end

defmodule RustyJson.Test.Point do
  @moduledoc false
  defstruct [:x, :y]

  defimpl RustyJson.Encoder do
    def encode(%{x: x, y: y}, opts), do: RustyJson.Encode.map(%{"xy" => [x, y]}, opts)
  end
end

defmodule RustyJson.Test.Envelope do
  @moduledoc false
  # A hand-written implementation that encodes a map of its own with the options it received (`sort_keys:` must
  # reach it) and a keyword list (an ordered object: kept in its order).
  defstruct [:body, :meta]

  defimpl RustyJson.Encoder do
    def encode(%{body: body, meta: meta}, opts) do
      [
        "[",
        RustyJson.Encode.map(%{"zeta" => body, "alpha" => 1}, opts),
        ",",
        RustyJson.Encode.keyword([z: meta, a: 2], opts),
        "]"
      ]
    end
  end
end

defmodule RustyJson.Test.Prefixed do
  @moduledoc false
  # Names where one is a prefix of another and the next byte sorts below `"` (space, `!`): under sort_keys a
  # shorter name comes first, which comparing the written `"name"` (quotes included) would get wrong.
  @derive RustyJson.Encoder
  defstruct [:"a b", :a, :a!, :ab]
end

defmodule RustyJson.Test.BadIodata do
  @moduledoc false
  # An implementation whose result is not iodata (an integer above 255 in a list).
  defstruct [:value]

  defimpl RustyJson.Encoder do
    def encode(%{value: value}, _opts), do: [value]
  end
end

defmodule RustyJson.Test.Reloaded do
  @moduledoc false
  # Only test/rusty_json/structs_reload_test.exs uses it: its implementation is replaced and deleted there.
  @derive RustyJson.Encoder
  defstruct a: 1, b: 2
end

defmodule RustyJson.Test.Plain do
  @moduledoc false
  # No RustyJson.Encoder implementation: RustyJson 0.3's `protocol: false` writes it as a map.
  defstruct a: 1, b: "x"
end

defmodule RustyJson.Test.PlainMoney do
  @moduledoc false
  # RustyJson 0.3.10's Encoder docs: an implementation that returns a map, re-encoded automatically.
  defstruct [:amount, :currency]

  defimpl RustyJson.Encoder do
    def encode(%{amount: a, currency: c}, _opts), do: %{amount: a, currency: to_string(c)}
  end
end

defmodule RustyJson.Test.Returns do
  @moduledoc false
  # An implementation that returns its field as it is: iodata, or any plain term.
  defstruct [:value]

  defimpl RustyJson.Encoder do
    def encode(%{value: value}, _opts), do: value
  end
end

defmodule RustyJson.Test.Churned do
  @moduledoc false
  # Only test/rusty_json/structs_reload_concurrent_test.exs uses it: loaded there again and again in other forms
  # while other processes encode it. This one (on disk) is what its implementation comes back as once purged.
  @derive {RustyJson.Encoder, only: [:name]}
  defstruct [:id, :name, :extra]
end
