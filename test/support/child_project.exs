defmodule RustyJson.ChildProject do
  @moduledoc false
  # A copy of this project compiled by a child `mix`, as a user's machine compiles the package: its mix.exs, mix/
  # and lib/ copied, native/ this checkout's (linked), the artifacts served from a directory, and a PATH and HOME
  # without cargo when a test wants a machine without Rust.

  @root Path.expand("../..", __DIR__)

  @doc "The project's root (this checkout)."
  def root, do: @root

  @doc "Copies the project into `tmp/project`; returns its path."
  def copy!(tmp) do
    project = Path.join(tmp, "project")
    File.mkdir_p!(project)

    for file <- ["mix.exs", "mix", "lib"],
        do: File.cp_r!(Path.join(@root, file), Path.join(project, file))

    File.ln_s!(Path.join(@root, "native"), Path.join(project, "native"))
    project
  end

  @doc "Writes the project's checksum file listing `checksums` (name => SHA-256 hex)."
  def write_checksums!(project, checksums) do
    entries = Enum.map(checksums, fn {name, sha} -> ~s(  "#{name}" => "sha256:#{sha}",\n) end)

    File.write!(Path.join(project, "checksum-Elixir.RustyJson.Native.exs"), [
      "%{\n",
      entries,
      "}\n"
    ])
  end

  @doc """
  Runs `mix args` in `project` (prod, so test/support is not needed there): `{output, exit status}`. `env` is put
  over what every run has: nothing forced or targeted (no RUSTYJSON_BUILD, RUSTYJSON_TARGET, MIX_TARGET or
  TARGET_* from this VM's environment).
  """
  def mix(project, args, env) do
    defaults =
      for name <-
            ~w(MIX_BUILD_PATH MIX_TARGET RUSTYJSON_BUILD RUSTYJSON_TARGET RUSTYJSON_CARGO_PROFILE
                     TARGET_ARCH TARGET_OS TARGET_ABI TARGET_CPU),
          do: {name, nil}

    env =
      Enum.reduce(env, [{"MIX_ENV", "prod"} | defaults], fn {key, _} = pair, acc ->
        List.keystore(acc, key, 0, pair)
      end)

    System.cmd(System.find_executable("mix"), args, cd: project, env: env, stderr_to_stdout: true)
  end

  @doc """
  PATH without any directory that has cargo in it (elixir, erl and mix linked into a directory of their own when
  they were only there), `extra_bin` first when given, and a HOME of its own (no ~/.cargo/bin).
  """
  def no_cargo_env(tmp, extra_bin \\ nil) do
    bin = Path.join(tmp, "bin")
    File.mkdir_p!(bin)
    path = System.get_env("PATH", "") |> String.split(":", trim: true)
    kept = Enum.reject(path, &File.exists?(Path.join(&1, "cargo")))

    for tool <- ["elixir", "erl", "mix"],
        not Enum.any?(kept, &File.exists?(Path.join(&1, tool))),
        not File.exists?(Path.join(bin, tool)),
        do: File.ln_s!(System.find_executable(tool), Path.join(bin, tool))

    home = Path.join(tmp, "home")
    File.mkdir_p!(home)
    [{"PATH", Enum.join(List.wrap(extra_bin) ++ [bin | kept], ":")}, {"HOME", home}]
  end

  @doc "Whether this machine has cargo."
  def cargo_available? do
    System.find_executable("cargo") != nil or File.exists?(Path.expand("~/.cargo/bin/cargo"))
  end
end
