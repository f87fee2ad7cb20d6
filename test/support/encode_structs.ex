defmodule RustyJson.Test.Derived do
  @moduledoc false
  @derive RustyJson.Encoder
  defstruct [:name, :age, :email]
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
end

defmodule RustyJson.Test.Point do
  @moduledoc false
  defstruct [:x, :y]

  defimpl RustyJson.Encoder do
    def encode(%{x: x, y: y}, opts), do: RustyJson.Encode.map(%{"xy" => [x, y]}, opts)
  end
end
