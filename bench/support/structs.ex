defmodule RustyJson.Bench.S5 do
  @moduledoc false
  @derive RustyJson.Encoder
  defstruct [:id, :name, :email, :active, :score]
end

defmodule RustyJson.Bench.S10 do
  @moduledoc false
  @derive RustyJson.Encoder
  defstruct [:id, :name, :email, :active, :score, :city, :zip, :tags, :created, :ratio]
end

defmodule RustyJson.Bench.Leaf do
  @moduledoc false
  @derive RustyJson.Encoder
  defstruct [:id, :label]
end

defmodule RustyJson.Bench.Branch do
  @moduledoc false
  @derive RustyJson.Encoder
  defstruct [:id, :leaves]
end

defmodule RustyJson.Bench.Root do
  @moduledoc false
  @derive RustyJson.Encoder
  defstruct [:id, :branches]
end

defmodule RustyJson.Bench.Custom do
  @moduledoc false
  defstruct [:id, :name, :email, :active, :score]

  defimpl RustyJson.Encoder do
    def encode(s, opts) do
      RustyJson.Encode.map(
        %{id: s.id, name: s.name, email: s.email, active: s.active, score: s.score},
        opts
      )
    end
  end
end
